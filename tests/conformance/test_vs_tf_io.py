"""``tf.io``'s files and image codecs against TensorFlow 2.21 (see tf_oracle.py for the rules).

Images are made in the body from NumPy arrays (PNG/JPEG through each side's own encoder, BMP and
GIF by the small writers below), so each side decodes bytes its own encoder or the same writer
made; the lossless formats must decode to the array itself.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from tf_oracle import same_as_tf

_RNG = np.random.default_rng(34)
RGB = _RNG.integers(0, 256, (6, 9, 3), dtype=np.uint8)
SMOOTH = np.kron(_RNG.integers(0, 256, (3, 4, 3), dtype=np.uint8), np.ones((8, 8, 1), np.uint8))


def _bmp(image: np.ndarray) -> bytes:
    """An uncompressed 24- or 32-bit BMP (rows bottom-up, BGR(A), padded to 4 bytes)."""
    height, width, channels = image.shape
    pixels = image[::-1, :, [2, 1, 0, 3][:channels]]
    row = width * channels
    pad = (-row) % 4
    body = b"".join(pixels[r].tobytes() + b"\0" * pad for r in range(height))
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 8 * channels, 0, len(body), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 14 + 40 + len(body), 0, 0, 54) + info + body


def _lzw_uncompressed(indices: np.ndarray) -> bytes:
    """GIF LZW data that only ever emits literals (a clear code every 250 codes keeps them 9 bits)."""
    codes = []
    for start in range(0, len(indices), 250):
        codes.append(256)
        codes.extend(int(i) for i in indices[start : start + 250])
    codes.append(257)
    bits = "".join(format(c, "09b")[::-1] for c in codes)
    bits += "0" * (-len(bits) % 8)
    data = bytes(int(bits[i : i + 8][::-1], 2) for i in range(0, len(bits), 8))
    return b"".join(bytes([len(data[i : i + 255])]) + data[i : i + 255] for i in range(0, len(data), 255)) + b"\0"


def _gif(frames: np.ndarray, palette: np.ndarray) -> bytes:
    """A GIF89a of ``frames`` (palette indices ``[n, h, w]``) with a 256-colour global palette."""
    _, height, width = frames.shape
    out = b"GIF89a" + struct.pack("<HHBBB", width, height, 0xF7, 0, 0) + palette.astype(np.uint8).tobytes()
    for frame in frames:
        out += b"\x21\xf9\x04\x00\x00\x00\x00\x00"  # graphic control: no disposal, no delay
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0) + b"\x08" + _lzw_uncompressed(frame.reshape(-1))
    return out + b"\x3b"


PALETTE = _RNG.integers(0, 256, (256, 3))
GIF_FRAMES = _RNG.integers(0, 256, (2, 5, 7))


@same_as_tf("io.decode_png", "io.encode_png", "image.decode_png", "image.encode_png")
def test_png_round_trip_is_exact(tf):
    rgb, gray = tf.constant(RGB), tf.constant(RGB[..., :1])
    rgba = tf.constant(np.concatenate([RGB, RGB[..., :1]], axis=-1))
    png = tf.io.encode_png(rgb)
    return (
        tf.io.decode_png(png),
        tf.io.decode_png(tf.io.encode_png(gray)),
        tf.io.decode_png(tf.io.encode_png(rgba, compression=9)),
        tf.io.decode_png(png, channels=1),
        tf.io.decode_png(png, channels=4),
        tf.image.decode_png(tf.image.encode_png(gray), channels=3),
    )


@same_as_tf("io.decode_png", "image.decode_png", edge=True)
def test_png_as_uint16_and_bad_channels(tf):
    png = tf.io.encode_png(tf.constant(RGB))
    return tf.io.decode_png(png, dtype="uint16")


@same_as_tf("io.encode_png", "image.encode_png", edge=True)
def test_encode_png_of_a_batch_gives_one_string_per_image(tf):
    pngs = tf.io.encode_png(tf.constant(np.stack([RGB, RGB[::-1]])))
    return tuple(pngs.shape), tf.io.decode_png(pngs[1])


@same_as_tf("io.encode_png", edge=True, match="encode_png")
def test_encode_png_of_a_2d_image_is_an_invalid_argument(tf):
    return tf.io.encode_png(tf.constant(RGB[..., 0]))


@pytest.mark.parametrize("dct_method", ["INTEGER_ACCURATE"])
@same_as_tf("io.decode_jpeg", "io.encode_jpeg", "image.decode_jpeg", "image.encode_jpeg")
def test_jpeg_round_trip(tf, dct_method):
    jpeg = tf.io.encode_jpeg(tf.constant(SMOOTH), quality=90)
    gray = tf.image.encode_jpeg(tf.constant(SMOOTH[..., :1]), chroma_downsampling=False)
    return (
        tf.io.decode_jpeg(jpeg, dct_method=dct_method),
        tf.io.decode_jpeg(jpeg, channels=1, dct_method=dct_method),
        tf.io.decode_jpeg(jpeg, ratio=2, dct_method=dct_method),
        tf.image.decode_jpeg(gray, dct_method=dct_method),
        tf.io.decode_jpeg(tf.io.encode_jpeg(tf.constant(SMOOTH), quality=50, progressive=True), dct_method=dct_method),
    )


@same_as_tf("io.decode_jpeg", edge=True)
def test_decode_jpeg_default_dct_is_tfs_fast_integer_dct(tf):
    # libjpeg-turbo's fast integer DCT through simplejpeg (the test extra): TF's default, to the byte
    return tf.cast(tf.io.decode_jpeg(tf.io.encode_jpeg(tf.constant(RGB))), tf.int32)


@same_as_tf("io.encode_jpeg", "image.encode_jpeg", edge=True, match="encode_jpeg")
def test_encode_jpeg_of_two_channels_is_an_invalid_argument(tf):
    return tf.io.encode_jpeg(tf.constant(RGB[..., :2]))


@same_as_tf("io.decode_jpeg", "image.decode_jpeg", edge=True, match="channels")
def test_decode_jpeg_bad_channels(tf):
    return tf.io.decode_jpeg(tf.io.encode_jpeg(tf.constant(RGB)), channels=2)


@same_as_tf("io.decode_bmp", "image.decode_bmp")
def test_decode_bmp_is_exact(tf):
    rgba = np.concatenate([RGB, RGB[..., :1]], axis=-1)
    return tf.io.decode_bmp(_bmp(RGB)), tf.image.decode_bmp(_bmp(rgba)), tf.io.decode_bmp(_bmp(RGB[:, :7]))


@same_as_tf("io.decode_bmp", "image.decode_bmp", edge=True, match="decode_bmp|DecodeBmp")
def test_decode_bmp_of_a_png_is_an_invalid_argument(tf):
    return tf.io.decode_bmp(tf.io.encode_png(tf.constant(RGB)))


@same_as_tf("io.decode_gif", "image.decode_gif")
def test_decode_gif_gives_every_frame(tf):
    return tf.io.decode_gif(_gif(GIF_FRAMES, PALETTE))


@same_as_tf("io.decode_gif", "image.decode_gif", edge=True)
def test_decode_gif_of_a_png_is_one_frame(tf):
    return tf.io.decode_gif(tf.io.encode_png(tf.constant(RGB)))


@same_as_tf("io.decode_image", "image.decode_image")
def test_decode_image_picks_the_format(tf):
    png = tf.io.encode_png(tf.constant(RGB))
    return (
        tf.io.decode_image(png),
        tf.io.decode_image(_bmp(RGB), channels=3),
        tf.io.decode_image(_gif(GIF_FRAMES, PALETTE)),
        tf.io.decode_image(_gif(GIF_FRAMES, PALETTE), expand_animations=False),
        tf.io.decode_image(png, dtype=tf.float32),
        tf.image.decode_image(png, channels=1),
    )


@same_as_tf("io.decode_image", "image.decode_image", edge=True, match="Unknown image file format")
def test_decode_image_of_garbage_is_an_invalid_argument(tf):
    return tf.io.decode_image(b"not an image")


@same_as_tf("io.extract_jpeg_shape", "io.is_jpeg", "image.extract_jpeg_shape", "image.is_jpeg")
def test_jpeg_shape_and_signature(tf):
    jpeg = tf.io.encode_jpeg(tf.constant(SMOOTH))
    png = tf.io.encode_png(tf.constant(RGB))
    return (
        tf.io.extract_jpeg_shape(jpeg),
        tf.image.extract_jpeg_shape(jpeg, output_type=tf.int64),
        tf.io.is_jpeg(jpeg),
        tf.image.is_jpeg(png),
    )


@same_as_tf("io.extract_jpeg_shape", "io.is_jpeg", "image.extract_jpeg_shape", "image.is_jpeg", edge=True)
def test_extract_jpeg_shape_of_a_png_is_an_invalid_argument(tf):
    return tf.io.is_jpeg(b""), tf.io.extract_jpeg_shape(tf.io.encode_png(tf.constant(RGB)))


@same_as_tf("io.decode_and_crop_jpeg", "image.decode_and_crop_jpeg")
def test_decode_and_crop_jpeg(tf):
    jpeg = tf.io.encode_jpeg(tf.constant(SMOOTH))
    return tf.io.decode_and_crop_jpeg(jpeg, [2, 3, 10, 12], dct_method="INTEGER_ACCURATE")


@same_as_tf("io.decode_and_crop_jpeg", "image.decode_and_crop_jpeg", edge=True)
def test_decode_and_crop_jpeg_outside_the_image(tf):
    return tf.io.decode_and_crop_jpeg(tf.io.encode_jpeg(tf.constant(SMOOTH)), [20, 0, 10, 10])


@same_as_tf("io.read_file", "io.write_file", "io.matching_files")
def test_write_read_and_match_files(tf, tmp_path):
    root = str(tmp_path / tf.__name__)
    tf.io.write_file(root + "/sub/b.bin", tf.constant(b"\x00\xffbytes"))
    tf.io.write_file(root + "/sub/a.bin", "text")
    found = tf.io.matching_files(root + "/sub/*.bin")
    names = [p.decode().rsplit("/", 1)[-1] for p in found.numpy().tolist()]
    return tf.io.read_file(root + "/sub/b.bin"), tf.io.read_file(found[0]), names


@same_as_tf("io.read_file", "io.write_file", "io.matching_files", edge=True)
def test_reading_a_missing_file_is_not_found(tf, tmp_path):
    assert tf.io.matching_files(str(tmp_path / "none" / "*.x")).shape == (0,)
    return tf.io.read_file(str(tmp_path / "missing.bin"))


@same_as_tf("io.encode_base64", "io.decode_base64")
def test_base64_is_web_safe(tf):
    data = tf.constant([b"\xfb\xff\xbf", b"ab", b""])
    encoded = tf.io.encode_base64(data)
    return encoded, tf.io.encode_base64(data, pad=True), tf.io.decode_base64(encoded)


@same_as_tf("io.encode_base64", "io.decode_base64", edge=True)
def test_decode_base64_of_a_bad_character_is_an_invalid_argument(tf):
    return tf.io.decode_base64(tf.constant("ab+/"))


@same_as_tf("io.decode_compressed")
def test_decode_compressed_plain(tf):
    return tf.io.decode_compressed(tf.constant([b"abc", b""]))


@same_as_tf("io.decode_compressed", edge=True)
def test_decode_compressed_of_bad_zlib_data(tf):
    return tf.io.decode_compressed(tf.constant(b"not zlib"), compression_type="ZLIB")


# WebP files (lossless) Pillow wrote from RGB (5x7) and RGBA with alpha > 0. No animated one: TF 2.21's
# decoder corrupts its heap on one (free(): corrupted unsorted chunks on the next call), killing the oracle.
WEBP_RGB = bytes.fromhex(
    "52494646d0000000574542505650384cc40000002f0600010017c1b4d6b625f5ff7fdca57e1d895496603e3a23300499ecee0e7bb08d6c5bc9ff1fcddc2d74cde93f710a60284023b719b6916d2bf9fe713288dc0b2026862268f757803540e610e9ccfc477c9a6fc3d67f8f8515c0811611420e91182a561606cf01b8c6fa097a9d287342eb2f7e37f200f20e953fcf9d74ed0c7f01c3991656c82d379bc9f62d950f02e38be61bb515c2b3951525a85caa6669c606180400583636dbd619d1ff081a3540de38e05ce9bf28cb87fbaa9eeef66d44b19fc4"
)
WEBP_RGBA = bytes.fromhex(
    "52494646fc000000574542505650384cf00000002f0600011017c1c4b66d25ff37c7bdb17e275a85f9320206a195ea4eb381306d0000095ebd59a47be4076ee31e7e7092bb93dc3626b66d2bf9d60c87ea33605e0c4e13954a84ee505dd7625a5b7b93f4c882e6304653383c13a0b2009d8918021786e060bbeca0a338a5e661ad60fb9eed264a2244e8de0ca4482469c9d2f9375a2e10d6063f71d9da3be61c0c76bc46a9d3f40980b4647eacd5613277cbefa5d588436ce32b9ffc408be9169a988ca18adb21b40f6108b7c93ed50ab162af2c55775274e4d179f7d55f01a5eec02000c0b2b1d9b6ce88fe8757e805245d0bee51ef4e5969dc7df2f9ed3c3a64130506"
)


@same_as_tf("io.decode_webp", "image.decode_webp")
def test_decode_webp(tf):
    return (
        tf.io.decode_webp(WEBP_RGB),
        tf.io.decode_webp(WEBP_RGBA, channels=4),
        tf.image.decode_webp(WEBP_RGBA),
        tf.io.decode_image(WEBP_RGB),
        tf.io.decode_png(WEBP_RGBA),
    )


@same_as_tf("io.decode_webp", "image.decode_webp", edge=True, match="channels")
def test_decode_webp_with_other_channels_is_an_invalid_argument(tf):
    return tf.io.decode_webp(WEBP_RGB, channels=4)


@same_as_tf(
    "io.gfile.GFile",
    "io.gfile.copy",
    "io.gfile.exists",
    "io.gfile.glob",
    "io.gfile.isdir",
    "io.gfile.join",
    "io.gfile.listdir",
    "io.gfile.makedirs",
    "io.gfile.mkdir",
    "io.gfile.remove",
    "io.gfile.rename",
    "io.gfile.rmtree",
    "io.gfile.stat",
    "io.gfile.walk",
    "io.gfile.get_registered_schemes",
)
def test_gfile_round_trip(tf, tmp_path):
    g = tf.io.gfile
    root = g.join(str(tmp_path), tf.__name__)
    g.makedirs(g.join(root, "a", "b"))
    g.mkdir(g.join(root, "c"))
    g.mkdir(g.join(root, "c"))  # an existing directory is fine, as in TF
    with g.GFile(g.join(root, "a", "f.txt"), "w") as f:
        f.write("hello\nworld\n")
    g.copy(g.join(root, "a", "f.txt"), g.join(root, "a", "g.txt"))
    g.rename(g.join(root, "a", "g.txt"), g.join(root, "c", "h.txt"))
    g.copy(g.join(root, "a", "f.txt"), g.join(root, "c", "h.txt"), overwrite=True)
    lines = list(g.GFile(g.join(root, "c", "h.txt")))
    data = g.GFile(g.join(root, "a", "f.txt"), "rb").read()
    info = g.stat(g.join(root, "a", "f.txt"))
    walked = [(p[len(root) :], sorted(d), sorted(f)) for p, d, f in g.walk(root)]
    found = sorted(p[len(root) :] for p in g.glob(g.join(root, "*", "*.txt")))
    g.remove(g.join(root, "c", "h.txt"))
    g.rmtree(g.join(root, "a"))
    return (
        lines,
        data,
        info.length,
        info.is_directory,
        g.stat(root).is_directory,
        sorted(walked),
        found,
        sorted(g.listdir(root)),
        g.exists(g.join(root, "a")),
        g.isdir(g.join(root, "c")),
        g.exists("file://" + root),
        g.join("a", "b", "c"),
        g.join("/a/", "b"),
        g.join("gs://x", "y"),
        g.join("a", "/b"),
        "file" in g.get_registered_schemes() and "" in g.get_registered_schemes(),
    )


@pytest.mark.parametrize(
    "action",
    [
        "stat",
        "listdir",
        "rmtree",
        "remove",
        "read",
        "rename",
        "rename_exists",
        "copy_exists",
        "mkdir_no_parent",
        "remove_dir",
    ],
)
@same_as_tf(
    "io.gfile.GFile",
    "io.gfile.copy",
    "io.gfile.exists",
    "io.gfile.glob",
    "io.gfile.isdir",
    "io.gfile.join",
    "io.gfile.listdir",
    "io.gfile.makedirs",
    "io.gfile.mkdir",
    "io.gfile.remove",
    "io.gfile.rename",
    "io.gfile.rmtree",
    "io.gfile.stat",
    "io.gfile.walk",
    "io.gfile.get_registered_schemes",
    edge=True,
)
def test_gfile_errors_are_tf_errors(tf, tmp_path, action):
    g = tf.io.gfile
    root = g.join(str(tmp_path), tf.__name__ + action)
    g.makedirs(root)
    missing, present = g.join(root, "missing"), g.join(root, "f.txt")
    with g.GFile(present, "w") as f:
        f.write("x")
    assert list(g.walk(missing)) == [] and g.glob(g.join(missing, "*")) == [] and not g.exists(missing)
    calls = {
        "stat": lambda: g.stat(missing),
        "listdir": lambda: g.listdir(missing),
        "rmtree": lambda: g.rmtree(missing),
        "remove": lambda: g.remove(missing),
        "read": lambda: g.GFile(missing).read(),
        "rename": lambda: g.rename(missing, g.join(root, "new")),
        "rename_exists": lambda: g.rename(missing, present),
        "copy_exists": lambda: g.copy(present, present),
        "mkdir_no_parent": lambda: g.mkdir(g.join(missing, "x")),
        "remove_dir": lambda: g.remove(root),
    }
    return calls[action]()


@same_as_tf("io.decode_csv")
def test_decode_csv(tf):
    records = tf.constant(["1,2.5,a,9000000000,1e300", '3,,"b,c",-1,NA', ' 4, 0.5,"d""e",7,2'])
    defaults = [[0], [1.0], ["z"], tf.constant([0], tf.int64), tf.constant([0.5], tf.float64)]
    return (
        tf.io.decode_csv(records, defaults, na_value="NA"),
        tf.io.decode_csv(tf.constant([["1;x"], ["2;y"]]), [[0], [""]], field_delim=";"),
        tf.io.decode_csv("1,2,3", [[0], [0]], select_cols=[0, 2]),
        tf.io.decode_csv(['"a",b'], [[""], [""]], use_quote_delim=False),
    )


@pytest.mark.parametrize("case", ["required", "not_an_int", "field_count"])
@same_as_tf("io.decode_csv", edge=True, match="decode_csv")
def test_decode_csv_errors_are_invalid_arguments(tf, case):
    if case == "required":
        return tf.io.decode_csv(["1,,a"], [[0], tf.constant([], tf.float32), ["z"]])
    if case == "not_an_int":
        return tf.io.decode_csv(["1.5,2"], [[0], [1.0]])
    return tf.io.decode_csv(["1,2,3"], [[0], [0]])
