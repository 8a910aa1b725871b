use gpukit::prelude::*;

#[kernel]
fn float(a: &mut [f32]) {}

fn main() {}
