use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let s = "hello";
}

fn main() {}
