use gpukit::prelude::*;

#[kernel]
fn k(a: &[f32], out: &mut [f32]) {
    out[0] = a.iter().sum();
}

fn main() {}
