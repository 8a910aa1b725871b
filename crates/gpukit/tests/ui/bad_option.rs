use gpukit::prelude::*;

#[kernel(fast)]
fn k(a: &mut [f32]) {}

fn main() {}
