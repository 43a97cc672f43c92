#!/usr/bin/python3
"""Regenerates the committed image fixtures under tests/fixtures/images/.

Run with Debian's python (Pillow 9.4 + numpy from python3-pil / python3-numpy):
    /usr/bin/python3 tools/make_image_fixtures.py

The expected values all come from Pillow itself, so the C++ decoder and resize in
src/formats/image*.cpp are checked against the library the checkpoint was trained with:
  * photos:   <name>.pillow384.png  Pillow convert("RGB").resize((384, 384), BICUBIC)
              <name>.input.npy      normalised top-left 378x378 CHW float32 of that resize
              <name>.decode.txt     width height fnv1a64(pixels) of Pillow's decode
  * synthetic/manifest.txt lists small decode and resize cases with raw expected RGB bytes
    (<case>.rgb, row-major interleaved) computed by Pillow.
  * bad/      crafted headers (zero width, huge dimensions) with valid CRCs.
Everything is deterministic (fixed seeds; PNGs written by our own writer or Pillow).
"""
import io
import os
import struct
import sys
import warnings
import zlib

import numpy as np
import PIL
from PIL import Image

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "images")
PHOTOS = ["rocket.jpg", "astronaut.png"]
RESIZE, CROP = 384, 378


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:  # fine for < 1 MB
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def siglip_input(resized: Image.Image) -> np.ndarray:
    x = np.asarray(resized, dtype=np.uint8).astype(np.float32) / np.float32(255.0)
    x = (x - np.float32(0.5)) / np.float32(0.5)
    return np.ascontiguousarray(x[:CROP, :CROP, :].transpose(2, 0, 1)).astype("<f4")


# ---------------------------------------------------------------- minimal PNG writer
def _chunk(tag: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)


def _pack_rows(samples: np.ndarray, depth: int) -> list:
    """samples: [h, w, c] integer array -> list of raw scanline bytes (no filter byte)."""
    h, w, c = samples.shape
    rows = []
    for y in range(h):
        flat = samples[y].reshape(-1)
        if depth == 16:
            rows.append(flat.astype(">u2").tobytes())
        elif depth == 8:
            rows.append(flat.astype(np.uint8).tobytes())
        else:  # sub-byte: pack MSB first, pad the last byte with zeros
            per = 8 // depth
            out = bytearray((len(flat) + per - 1) // per)
            for i, v in enumerate(flat):
                out[i // per] |= int(v) << (8 - depth * (i % per + 1))
            rows.append(bytes(out))
    return rows


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(path, samples, depth, color_type, palette=None, trns=None, interlace=False, width=None, height=None):
    samples = np.asarray(samples)
    if samples.ndim == 2:
        samples = samples[:, :, None]
    h, w = samples.shape[:2]
    ihdr = struct.pack(">IIBBBBB", w if width is None else width, h if height is None else height,
                       depth, color_type, 0, 0, 1 if interlace else 0)
    raw = bytearray()
    if interlace:
        for x0, y0, dx, dy in ADAM7:
            sub = samples[y0::dy, x0::dx]
            if sub.shape[0] == 0 or sub.shape[1] == 0:
                continue
            for row in _pack_rows(sub, depth):
                raw += b"\x00" + row
    else:
        for row in _pack_rows(samples, depth):
            raw += b"\x00" + row
    data = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr)
    if palette is not None:
        data += _chunk(b"PLTE", bytes(np.asarray(palette, dtype=np.uint8).reshape(-1)))
    if trns is not None:
        data += _chunk(b"tRNS", trns)
    data += _chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + _chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


# ---------------------------------------------------------------- fixtures
def make_photos():
    for name in PHOTOS:
        src = os.path.join(ROOT, name)
        stem = os.path.splitext(name)[0]
        rgb = Image.open(src).convert("RGB")
        with open(os.path.join(ROOT, stem + ".decode.txt"), "w") as f:
            f.write(f"{rgb.width} {rgb.height} {fnv1a64(rgb.tobytes()):016x}\n")
        resized = rgb.resize((RESIZE, RESIZE), Image.BICUBIC)
        resized.save(os.path.join(ROOT, stem + ".pillow384.png"), optimize=True)
        np.save(os.path.join(ROOT, stem + ".input.npy"), siglip_input(resized))
        print(f"{name}: {rgb.width}x{rgb.height} -> {RESIZE}x{RESIZE}")


def make_synthetic():
    out = os.path.join(ROOT, "synthetic")
    os.makedirs(out, exist_ok=True)
    rng = np.random.RandomState(20240611)
    astro = Image.open(os.path.join(ROOT, "astronaut.png")).convert("RGB")
    lines = []

    def expect_decode(fname):
        im = Image.open(os.path.join(out, fname))
        with warnings.catch_warnings():  # P + tRNS bytes: Pillow warns, the RGB pixels are what we want
            warnings.simplefilter("ignore")
            rgb = im.convert("RGB")
        stem = os.path.splitext(fname)[0]
        with open(os.path.join(out, stem + ".rgb"), "wb") as f:
            f.write(rgb.tobytes())
        lines.append(f"decode {fname} {rgb.width} {rgb.height} {stem}.rgb  # Pillow mode {im.mode}")

    # --- PNG colour types / depths, all written by write_png, expected = Pillow convert("RGB")
    w, h = 13, 7
    g16 = rng.randint(0, 65536, size=(h, w)).astype(np.uint16)
    g16[0, :6] = [0, 1, 255, 256, 1000, 65535]  # Pillow 9.4 opens 16-bit grey as "I": clips to 255
    write_png(os.path.join(out, "gray16.png"), g16, 16, 0)
    write_png(os.path.join(out, "gray8.png"), rng.randint(0, 256, (h, w)), 8, 0)
    write_png(os.path.join(out, "gray8_trns.png"), rng.randint(0, 256, (h, w)), 8, 0, trns=struct.pack(">H", 7))
    for d in (1, 2, 4):
        write_png(os.path.join(out, f"gray{d}.png"), rng.randint(0, 1 << d, (h, w)), d, 0)
    write_png(os.path.join(out, "rgb16.png"), rng.randint(0, 65536, (h, w, 3)), 16, 2)
    write_png(os.path.join(out, "rgb8_trns.png"), rng.randint(0, 256, (h, w, 3)), 8, 2, trns=struct.pack(">HHH", 1, 2, 3))
    write_png(os.path.join(out, "graya8.png"), rng.randint(0, 256, (h, w, 2)), 8, 4)
    write_png(os.path.join(out, "graya16.png"), rng.randint(0, 65536, (h, w, 2)), 16, 4)
    write_png(os.path.join(out, "rgba8.png"), rng.randint(0, 256, (h, w, 4)), 8, 6)
    write_png(os.path.join(out, "rgba16.png"), rng.randint(0, 65536, (h, w, 4)), 16, 6)
    pal = rng.randint(0, 256, (256, 3))
    write_png(os.path.join(out, "palette8.png"), rng.randint(0, 256, (h, w)), 8, 3, palette=pal)
    write_png(os.path.join(out, "palette4_trns.png"), rng.randint(0, 16, (h, w)), 4, 3, palette=pal[:16],
              trns=bytes([0, 128, 255, 3]))
    write_png(os.path.join(out, "palette1.png"), rng.randint(0, 2, (h, w)), 1, 3, palette=pal[:2])
    crop = np.asarray(astro.crop((200, 100, 229, 119)))  # 29x19, odd sizes exercise Adam7 edges
    write_png(os.path.join(out, "rgb8_interlaced.png"), crop, 8, 2, interlace=True)
    write_png(os.path.join(out, "palette2_interlaced.png"), rng.randint(0, 4, (11, 9)), 2, 3, palette=pal[:4],
              interlace=True)
    for f in ["gray16.png", "gray8.png", "gray8_trns.png", "gray1.png", "gray2.png", "gray4.png", "rgb16.png",
              "rgb8_trns.png", "graya8.png", "graya16.png", "rgba8.png", "rgba16.png", "palette8.png",
              "palette4_trns.png", "palette1.png", "rgb8_interlaced.png", "palette2_interlaced.png"]:
        expect_decode(f)

    # --- JPEG variants saved by Pillow (libjpeg-turbo), expected = Pillow's own decode
    photo = astro.crop((150, 60, 187, 83))  # 37x23: odd sizes exercise chroma upsampling edges
    photo.save(os.path.join(out, "jpeg420.jpg"), quality=90)  # Pillow default 4:2:0
    photo.save(os.path.join(out, "jpeg422.jpg"), quality=90, subsampling=1)
    photo.save(os.path.join(out, "jpeg_progressive.jpg"), quality=80, progressive=True)
    photo.convert("L").save(os.path.join(out, "jpeg_gray.jpg"), quality=90)
    photo.convert("CMYK").save(os.path.join(out, "jpeg_cmyk.jpg"), quality=90)
    for f in ["jpeg420.jpg", "jpeg422.jpg", "jpeg_progressive.jpg", "jpeg_gray.jpg", "jpeg_cmyk.jpg"]:
        expect_decode(f)

    # --- resize cases: 8-bit RGB PNG source, expected = Pillow resize(BICUBIC)
    def resize_case(src_name, img, ow, oh):
        path = os.path.join(out, src_name)
        if not os.path.exists(path):
            img.save(path)
        res = Image.open(path).convert("RGB").resize((ow, oh), Image.BICUBIC)
        stem = os.path.splitext(src_name)[0]
        exp = f"{stem}_{ow}x{oh}.rgb"
        with open(os.path.join(out, exp), "wb") as f:
            f.write(res.tobytes())
        lines.append(f"resize {src_name} {ow} {oh} {exp}")

    noise = lambda ww, hh: Image.fromarray(rng.randint(0, 256, (hh, ww, 3)).astype(np.uint8), "RGB")
    n7x5, n50x40, n30x12, n97x61 = noise(7, 5), noise(50, 40), noise(30, 12), noise(97, 61)
    resize_case("noise7x5.png", n7x5, 19, 13)            # upscale both axes
    resize_case("noise50x40.png", n50x40, 17, 23)        # non-integer downscale
    resize_case("noise30x12.png", n30x12, 11, 29)        # x down, y up, non-square
    resize_case("noise30x12.png", n30x12, 13, 12)        # horizontal pass only
    resize_case("noise30x12.png", n30x12, 30, 7)         # vertical pass only
    resize_case("noise30x12.png", n30x12, 30, 12)        # same size: copy
    resize_case("noise97x61.png", n97x61, 9, 5)          # support scaled by ~11
    resize_case("pixel1x1.png", Image.new("RGB", (1, 1), (200, 17, 99)), 5, 3)
    resize_case("astro64x48.png", astro.crop((180, 40, 244, 88)), 100, 77)  # real content, upscale

    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("# generated by tools/make_image_fixtures.py with Pillow %s; do not edit\n" % PIL.__version__)
        f.write("# decode <file> <width> <height> <expected.rgb> | resize <src.png> <out_w> <out_h> <expected.rgb>\n")
        for line in lines:
            f.write(line + "\n")


def make_bad():
    out = os.path.join(ROOT, "bad")
    os.makedirs(out, exist_ok=True)
    tiny = np.zeros((1, 1, 3), np.uint8)
    # Valid CRCs, so only the dimension checks can reject them.
    write_png(os.path.join(out, "zero_width.png"), tiny, 8, 2, width=0, height=1)
    write_png(os.path.join(out, "huge_100000.png"), tiny, 8, 2, width=100000, height=100000)
    write_png(os.path.join(out, "too_many_pixels.png"), tiny, 8, 2, width=30000, height=8000)  # 240 M pixels
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 20, 30)).save(buf, "JPEG")
    jpg = bytearray(buf.getvalue())
    sof = jpg.find(b"\xff\xc0")
    assert sof > 0
    struct.pack_into(">HH", jpg, sof + 5, 60000, 60000)  # height, width
    with open(os.path.join(out, "huge_60000.jpg"), "wb") as f:
        f.write(jpg)


def main():
    if not PIL.__version__.startswith("9.4"):
        print(f"warning: expected Pillow 9.4 (Debian 12), running {PIL.__version__}", file=sys.stderr)
    make_photos()
    make_synthetic()
    make_bad()


if __name__ == "__main__":
    main()
