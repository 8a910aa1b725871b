use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let f = |x: f32| x * 2.0;
}

fn main() {}
