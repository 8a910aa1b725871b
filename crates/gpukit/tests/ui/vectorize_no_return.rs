use gpukit::prelude::*;

#[vectorize]
fn f(x: f32) {}

fn main() {}
