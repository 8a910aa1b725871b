use gpukit::prelude::*;

#[kernel]
fn k(a: Vec<f32>) {}

fn main() {}
