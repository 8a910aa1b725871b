use super::*;
use gpukit::Array;

#[test]
fn submit_runs_on_the_named_worker_and_device() {
    let pool = DevicePool::virtual_cpu(4).unwrap();
    assert_eq!(pool.len(), 4);
    assert!(pool.is_virtual_cpu());
    for w in 0..4 {
        let (i, d, n, dflt) = pool
            .submit(w, |ctx| {
                Ok((
                    ctx.index(),
                    ctx.device(),
                    ctx.world_size(),
                    gpukit::default_device(),
                ))
            })
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!((i, d, n, dflt), (w, Device::Cpu, 4, Device::Cpu));
    }
    assert!(pool.submit(4, |_| Ok(())).is_err());
}

#[test]
fn an_error_names_the_worker_and_does_not_poison_it() {
    let pool = DevicePool::virtual_cpu(2).unwrap();
    pool.submit(1, |ctx| {
        ctx.put("x", 41i64);
        Ok(())
    })
    .unwrap()
    .wait()
    .unwrap();
    let e = pool
        .submit(1, |_| -> Result<()> { Err(Error::Other("boom".into())) })
        .unwrap()
        .wait()
        .unwrap_err()
        .to_string();
    assert!(e.contains("worker 1 (cpu)") && e.contains("boom"), "{e}");
    // a gpukit error inside a job (shape mismatch) comes back the same way
    let e = pool
        .submit(1, |_| {
            let a = Array::<f32>::ones(3)?;
            let b = Array::<f32>::ones(4)?;
            (&a + &b).map(|_| ())
        })
        .unwrap()
        .wait()
        .unwrap_err()
        .to_string();
    assert!(e.contains("worker 1"), "{e}");
    let e = pool
        .submit(1, |_| -> Result<()> { panic!("kaboom") })
        .unwrap()
        .wait()
        .unwrap_err()
        .to_string();
    assert!(e.contains("panicked") && e.contains("kaboom"), "{e}");
    // the worker still has its state and serves the next job
    let v = pool
        .submit(1, |ctx| Ok(*ctx.get::<i64>("x").unwrap() + 1))
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(v, 42);
}

#[test]
fn map_keeps_order_and_reports_every_failure() {
    let pool = DevicePool::virtual_cpu(3).unwrap();
    let out = pool
        .map((0..10).collect(), |ctx, x: i32| Ok((x, ctx.index())))
        .unwrap();
    assert_eq!(
        out.iter().map(|p| p.0).collect::<Vec<_>>(),
        (0..10).collect::<Vec<_>>()
    );
    assert!(out.iter().all(|(x, w)| *x as usize % 3 == *w));
    let e = pool
        .map((0..6).collect(), |_, x: i32| {
            if x % 3 == 1 {
                Err(Error::Other(format!("bad {x}")))
            } else {
                Ok(x)
            }
        })
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("2 jobs failed") && e.contains("bad 1") && e.contains("bad 4"),
        "{e}"
    );
}

#[test]
fn store_take_and_keys() {
    let pool = DevicePool::virtual_cpu(1).unwrap();
    let r = pool
        .submit(0, |ctx| {
            ctx.put("b", 1u8);
            ctx.put("a", String::from("s"));
            let wrong = ctx.take::<u32>("b");
            let keys = ctx.keys();
            let got = ctx.take::<u8>("b");
            Ok((wrong, keys, got, ctx.keys()))
        })
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(r.0, None);
    assert_eq!(r.1, vec!["a", "b"]);
    assert_eq!(r.2, Some(1));
    assert_eq!(r.3, vec!["a"]);
}

#[test]
fn sizes_and_variables_are_checked() {
    assert!(DevicePool::virtual_cpu(0).is_err());
    assert!(DevicePool::with_devices(vec![]).is_err());
    assert_eq!(parse_cpu_devices(" 4 ").unwrap(), 4);
    for bad in ["0", "x", "-1", "5000"] {
        let e = parse_cpu_devices(bad).unwrap_err().to_string();
        assert!(e.contains(CPU_DEVICES_VAR), "{e}");
    }
    let pool = DevicePool::with_devices(vec![Device::Cpu, Device::Cpu]).unwrap();
    assert!(pool.to_string().contains("2 virtual CPU"));
}

#[test]
fn dropping_the_pool_finishes_queued_jobs() {
    let pool = DevicePool::virtual_cpu(2).unwrap();
    let h = pool
        .submit(0, |_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            Ok(7)
        })
        .unwrap();
    drop(pool);
    assert_eq!(h.wait().unwrap(), 7);
}
