use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let i = grid(1);
    let w = [0.0f32; 4];
    w[i % 4] = a[i];
}

fn main() {}
