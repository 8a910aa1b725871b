use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let r = &a[0];
}

fn main() {}
