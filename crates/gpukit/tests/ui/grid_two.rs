use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let (x, y) = grid(2);
}

fn main() {}
