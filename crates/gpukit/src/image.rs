//! Images as arrays: load a PNG (or JPEG, ...) into an `Array<f32>`, save one, and show one
//! inline in a notebook.
//!
//! A colour image is an array of shape `(height, width, 4)`: rows first, then columns, then the
//! red, green, blue and alpha channels, each a float in `[0, 1]`. [`imshow`] also accepts
//! `(height, width)` (grey levels) and `(height, width, 3)` (RGB without alpha). Values outside
//! `[0, 1]` are clamped when an image is shown or saved; NaN shows as 0.
//!
//! ```no_run
//! use gpukit::image::{imshow, load_image};
//!
//! # fn main() -> gpukit::Result<()> {
//! let logo = load_image("notebooks/images/logo.png")?; // (400, 640, 4) on the default device
//! let shown = imshow(&logo)?;                           // the last expression of a cell displays it
//! # Ok(())
//! # }
//! ```

use crate::array::Array;
use crate::error::{Error, Result};
use base64::Engine as _;
use ndarray::{ArrayBase, ArrayD, ArrayViewD, Data, Dimension, IxDyn};
use std::fmt;
use std::path::Path;

/// Reads an image file into an array of shape `(height, width, 4)` with RGBA values in `[0, 1]`,
/// on the default device.
///
/// Any format the `image` crate can decode with the features gpukit enables (PNG) is accepted;
/// grey, RGB and 16-bit images are converted to 8-bit RGBA first, so the result always has four
/// channels.
pub fn load_image(path: impl AsRef<Path>) -> Result<Array<f32>> {
    let host = load_image_host(path.as_ref())?;
    Array::from_ndarray(&host)
}

/// Reads an image file into a host `ndarray` of shape `(height, width, 4)` in `[0, 1]`.
fn load_image_host(path: &Path) -> Result<ArrayD<f32>> {
    let img = image::open(path)
        .map_err(|e| Error::Other(format!("cannot load image {}: {e}", path.display())))?;
    rgba_to_array(&img.to_rgba8())
}

/// Converts 8-bit RGBA pixels to a `(height, width, 4)` float array in `[0, 1]`.
fn rgba_to_array(img: &image::RgbaImage) -> Result<ArrayD<f32>> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let data: Vec<f32> = img.as_raw().iter().map(|&v| f32::from(v) / 255.0).collect();
    ArrayD::from_shape_vec(IxDyn(&[h, w, 4]), data)
        .map_err(|e| Error::Other(format!("internal: decoded image has the wrong size: {e}")))
}

/// Writes an image array to a file; the format follows the file extension (`.png`).
///
/// The array may have shape `(height, width)`, `(height, width, 3)` or `(height, width, 4)`;
/// values are clamped to `[0, 1]`. A device array is copied to the host first.
pub fn save_image(image: &impl AsImage, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let rgba = image.to_rgba8()?;
    rgba.save(path)
        .map_err(|e| Error::Other(format!("cannot save image {}: {e}", path.display())))
}

/// Renders an image array as a PNG [`Image`] that a notebook displays inline.
///
/// Make it the last expression of a cell (`imshow(&img)?`) to see it. Shapes and value ranges are
/// as for [`save_image`]. A device array is copied to the host first.
pub fn imshow(image: &impl AsImage) -> Result<Image> {
    let rgba = image.to_rgba8()?;
    Image::from_rgba8(&rgba)
}

/// Something that can be turned into 8-bit RGBA pixels: a gpukit [`Array<f32>`] or a host
/// `ndarray` of `f32`, of shape `(h, w)`, `(h, w, 3)` or `(h, w, 4)`.
pub trait AsImage {
    /// The pixels as 8-bit RGBA, values clamped to `[0, 1]` before scaling to `0..=255`.
    fn to_rgba8(&self) -> Result<image::RgbaImage>;
}

impl AsImage for Array<f32> {
    fn to_rgba8(&self) -> Result<image::RgbaImage> {
        let host = self.to_host()?;
        view_to_rgba8(host.view().into_dyn())
    }
}

impl<S, D> AsImage for ArrayBase<S, D>
where
    S: Data<Elem = f32>,
    D: Dimension,
{
    fn to_rgba8(&self) -> Result<image::RgbaImage> {
        view_to_rgba8(self.view().into_dyn())
    }
}

/// One channel value in `[0, 1]` (clamped; NaN is 0) as a byte.
fn to_byte(v: f32) -> u8 {
    if v.is_nan() {
        0
    } else {
        (v.clamp(0.0, 1.0) * 255.0).round() as u8
    }
}

/// Converts a float image of shape `(h, w)`, `(h, w, 3)` or `(h, w, 4)` to RGBA bytes.
fn view_to_rgba8(view: ArrayViewD<'_, f32>) -> Result<image::RgbaImage> {
    let shape = view.shape().to_vec();
    let (h, w, channels) = match shape.as_slice() {
        [h, w] => (*h, *w, 1),
        [h, w, c] if *c == 3 || *c == 4 => (*h, *w, *c),
        [_, _, c] => {
            return Err(Error::Shape(format!(
            "an image needs 1, 3 or 4 channels; this array has shape {shape:?} with {c} channels \
                 (expected (height, width), (height, width, 3) or (height, width, 4))"
        )))
        }
        _ => {
            return Err(Error::Shape(format!(
                "an image is a 2-D (height, width) or 3-D (height, width, channels) array; \
                 this array has shape {shape:?}"
            )))
        }
    };
    if h == 0 || w == 0 {
        return Err(Error::Shape(format!(
            "an image needs at least one pixel; this array has shape {shape:?}"
        )));
    }
    let (wu, hu) = match (u32::try_from(w), u32::try_from(h)) {
        (Ok(wu), Ok(hu)) => (wu, hu),
        _ => {
            return Err(Error::Shape(format!(
                "image of shape {shape:?} is too large to encode"
            )))
        }
    };
    let mut bytes = Vec::with_capacity(h * w * 4);
    if channels == 1 {
        for &v in view.iter() {
            let b = to_byte(v);
            bytes.extend_from_slice(&[b, b, b, 255]);
        }
    } else {
        // `iter` walks in logical (row-major) order whatever the memory layout.
        let mut it = view.iter();
        for _ in 0..h * w {
            for _ in 0..3 {
                bytes.push(to_byte(*it.next().unwrap_or(&0.0)));
            }
            let alpha = if channels == 4 {
                to_byte(*it.next().unwrap_or(&1.0))
            } else {
                255
            };
            bytes.push(alpha);
        }
    }
    image::RgbaImage::from_raw(wu, hu, bytes)
        .ok_or_else(|| Error::Other("internal: RGBA buffer has the wrong length".into()))
}

/// A picture ready to display: PNG bytes plus its size.
///
/// In a notebook the kernel calls [`Image::evcxr_display`] when an `Image` is the last
/// expression of a cell, and the picture appears below the cell.
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    png: Vec<u8>,
    width: u32,
    height: u32,
}

impl Image {
    /// Encodes RGBA pixels as PNG.
    fn from_rgba8(rgba: &image::RgbaImage) -> Result<Image> {
        let mut png = Vec::new();
        rgba.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .map_err(|e| Error::Other(format!("cannot encode PNG: {e}")))?;
        Ok(Image {
            png,
            width: rgba.width(),
            height: rgba.height(),
        })
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The encoded PNG file.
    pub fn png_bytes(&self) -> &[u8] {
        &self.png
    }

    /// The PNG encoded as base64, as notebooks embed it.
    pub fn to_base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.png)
    }

    /// Writes the PNG to a file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        std::fs::write(path, &self.png)
            .map_err(|e| Error::Other(format!("cannot write {}: {e}", path.display())))
    }

    /// The text evcxr reads from standard output to show the image inline
    /// (`EVCXR_BEGIN_CONTENT image/png`, the base64 PNG, `EVCXR_END_CONTENT`).
    pub fn display_text(&self) -> String {
        format!(
            "EVCXR_BEGIN_CONTENT image/png\n{}\nEVCXR_END_CONTENT\n",
            self.to_base64()
        )
    }

    /// Shows the image inline in a notebook (evcxr's display protocol).
    pub fn evcxr_display(&self) {
        print!("{}", self.display_text());
    }
}

impl fmt::Debug for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Image({}x{}, {} bytes of PNG)",
            self.width,
            self.height,
            self.png.len()
        )
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Image({}x{})", self.width, self.height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, Array3, Array4};

    fn tmp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("gpukit-image-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn rgba_round_trip_through_png() {
        let mut a = Array3::<f32>::zeros((3, 5, 4));
        for ((y, x, c), v) in a.indexed_iter_mut() {
            *v = ((y * 5 + x) * 4 + c) as f32 / 255.0;
        }
        let path = tmp("round_trip.png");
        save_image(&a, &path).unwrap();
        let back = load_image_host(&path).unwrap();
        assert_eq!(back.shape(), &[3, 5, 4]);
        for (p, q) in a.iter().zip(back.iter()) {
            assert!((p - q).abs() < 1e-6, "{p} vs {q}");
        }
    }

    #[test]
    fn grey_and_rgb_get_opaque_alpha() {
        let grey = Array2::<f32>::from_elem((2, 3), 0.5);
        let rgba = grey.to_rgba8().unwrap();
        assert_eq!((rgba.width(), rgba.height()), (3, 2));
        assert_eq!(rgba.get_pixel(1, 1).0, [128, 128, 128, 255]);

        let mut rgb = Array3::<f32>::zeros((2, 2, 3));
        rgb[[0, 1, 0]] = 1.0;
        rgb[[0, 1, 2]] = 0.25;
        let rgba = rgb.to_rgba8().unwrap();
        assert_eq!(rgba.get_pixel(1, 0).0, [255, 0, 64, 255]);
        assert_eq!(rgba.get_pixel(0, 1).0, [0, 0, 0, 255]);
    }

    #[test]
    fn values_are_clamped_and_nan_is_zero() {
        let a = Array3::from_shape_vec((1, 1, 4), vec![-3.0, 7.5, f32::NAN, 2.0]).unwrap();
        assert_eq!(a.to_rgba8().unwrap().get_pixel(0, 0).0, [0, 255, 0, 255]);
    }

    #[test]
    fn non_contiguous_views_keep_logical_order() {
        // A transposed (w, h, 4) array read as (h, w, 4): pixel (x, y) must come from [y, x].
        let mut a = Array3::<f32>::zeros((2, 3, 4));
        a[[1, 2, 0]] = 1.0;
        let t = a.view().permuted_axes([1, 0, 2]);
        let rgba = t.to_rgba8().unwrap();
        assert_eq!((rgba.width(), rgba.height()), (2, 3));
        assert_eq!(rgba.get_pixel(1, 2).0, [255, 0, 0, 0]);
    }

    #[test]
    fn bad_shapes_are_clear_errors() {
        let one_d = ndarray::Array1::<f32>::zeros(10);
        let e = one_d.to_rgba8().unwrap_err();
        assert!(matches!(e, Error::Shape(_)), "{e}");
        assert!(e.to_string().contains("[10]"), "{e}");

        let two_channels = Array3::<f32>::zeros((4, 4, 2));
        let e = imshow(&two_channels).unwrap_err();
        assert!(e.to_string().contains("2 channels"), "{e}");

        let four_d = Array4::<f32>::zeros((1, 2, 2, 4));
        assert!(matches!(four_d.to_rgba8(), Err(Error::Shape(_))));

        let empty = Array3::<f32>::zeros((0, 4, 4));
        let e = imshow(&empty).unwrap_err();
        assert!(e.to_string().contains("at least one pixel"), "{e}");
    }

    #[test]
    fn imshow_emits_evcxr_png_content() {
        let a = Array3::<f32>::from_elem((4, 6, 4), 1.0);
        let img = imshow(&a).unwrap();
        assert_eq!((img.width(), img.height()), (6, 4));
        assert_eq!(&img.png_bytes()[..8], b"\x89PNG\r\n\x1a\n");
        let text = img.display_text();
        assert!(text.starts_with("EVCXR_BEGIN_CONTENT image/png\n"));
        assert!(text.ends_with("\nEVCXR_END_CONTENT\n"));
        let b64 = text.lines().nth(1).unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        assert_eq!(decoded, img.png_bytes());
        assert_eq!(format!("{img}"), "Image(6x4)");
    }

    #[test]
    fn missing_file_is_an_error_naming_the_path() {
        let e = load_image_host(Path::new("/no/such/dir/picture.png")).unwrap_err();
        assert!(e.to_string().contains("/no/such/dir/picture.png"), "{e}");
    }

    #[test]
    fn save_to_unwritable_path_is_an_error() {
        let a = Array2::<f32>::zeros((2, 2));
        let e = save_image(&a, "/no/such/dir/out.png").unwrap_err();
        assert!(e.to_string().contains("cannot save image"), "{e}");
    }

    #[test]
    fn load_image_and_imshow_go_through_device_arrays() {
        let mut a = Array3::<f32>::from_elem((2, 3, 4), 1.0);
        a[[1, 2, 0]] = 0.0;
        let path = tmp("device.png");
        save_image(&a, &path).unwrap();
        let arr = load_image(&path).unwrap();
        assert_eq!(arr.shape(), &[2, 3, 4]);
        assert_eq!(arr.device(), crate::default_device());
        let img = imshow(&arr).unwrap();
        assert_eq!((img.width(), img.height()), (3, 2));
        let back = arr.to_host().unwrap();
        assert_eq!(back[[1, 2, 0]], 0.0);
        assert_eq!(back[[1, 2, 1]], 1.0);

        let grey = Array::<f32>::full((4, 5), 0.5).unwrap();
        assert_eq!(imshow(&grey).unwrap().width(), 5);
        let bad = Array::<f32>::zeros((2, 3, 5)).unwrap();
        assert!(matches!(imshow(&bad), Err(Error::Shape(_))));
        assert!(matches!(
            save_image(&bad, tmp("bad.png")),
            Err(Error::Shape(_))
        ));
    }

    #[test]
    fn logo_loads_with_four_channels() {
        let logo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../notebooks/images/logo.png");
        let a = load_image_host(&logo).unwrap();
        assert_eq!(a.ndim(), 3);
        assert_eq!(a.shape()[2], 4);
        assert!(a.iter().all(|v| (0.0..=1.0).contains(v)));
    }
}
