use gpukit::prelude::*;

struct P {
    x: f32,
}

#[kernel]
fn k(a: &mut [f32]) {
    let p = P { x: 1.0 };
}

fn main() {}
