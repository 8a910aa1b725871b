use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let i = grid(1);
    match i {
        Some(x) => a[0] = 1.0,
        _ => {}
    }
}

fn main() {}
