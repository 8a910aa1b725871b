use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let i = grid(1);
    a[i] = a[i].frobnicate();
}

fn main() {}
