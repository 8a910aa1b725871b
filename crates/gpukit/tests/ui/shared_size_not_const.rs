use gpukit::prelude::*;

const N: usize = 64;

#[kernel]
fn k(a: &mut [f32]) {
    let tile = shared_array::<f32, N>();
}

fn main() {}
