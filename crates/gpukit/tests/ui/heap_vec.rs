use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let v: Vec<f32> = Vec::new();
}

fn main() {}
