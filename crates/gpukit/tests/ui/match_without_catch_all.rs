use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let i = grid(1);
    match i {
        0 => a[0] = 1.0,
        1 => a[1] = 2.0,
    }
}

fn main() {}
