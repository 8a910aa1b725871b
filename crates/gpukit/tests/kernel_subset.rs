use gpukit::prelude::*;

#[kernel]
fn double_it(input: &[f64], output: &mut [f64]) {
    let i = grid(1);
    if i < input.len() {
        output[i] = input[i] * 2.0;
    }
}

#[test]
fn smoke() {
    gpukit::set_default_device(Device::cpu());
    let data = Array::from_vec(vec![1.0, 2.0, 3.0], 3).unwrap();
    let mut out = Array::<f64>::zeros(3).unwrap();
    launch!(double_it[1, 4](&data, &mut out)).unwrap();
    println!("{}", double_it.source());
    println!("{out}");
}
