use gpukit::prelude::*;

#[device]
fn helper(a: &[f32]) -> f32 {
    a[0]
}

fn main() {}
