use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32], n: u32) {
    let i = grid(1);
    a[i] = n;
}

fn main() {}
