use gpukit::prelude::*;

#[kernel]
fn k(a: &[i16]) {}

fn main() {}
