use gpukit::prelude::*;

fn helper(x: f32) -> f32 {
    x * 2.0
}

#[kernel]
fn k(a: &mut [f32]) {
    let i = grid(1);
    a[i] = helper(a[i]);
}

fn main() {}
