//! `Array<T>`: an n-dimensional array on a device.
use crate::element::Element;
use std::marker::PhantomData;

/// An n-dimensional, C-contiguous array on one device.
pub struct Array<T: Element> {
    _t: PhantomData<T>,
}
