"""FarmHash ``Fingerprint64`` (farmhashna ``Hash64``), the 64-bit string hash TensorFlow uses.

TF's ``tf.strings.to_hash_bucket_fast``, Keras's ``Hashing`` layer (without ``salt``) and the
choice among several OOV slots of ``StringLookup`` take ``Fingerprint64(utf8 bytes) % buckets``;
computing the same function here gives the same buckets as TF. A port of Google's FarmHash
(MIT licence, https://github.com/google/farmhash, ``farmhashna::Hash64``), checked against
TensorFlow 2.21's ``to_hash_bucket_fast`` on random strings of every length from 0 to 199 bytes
and a few longer ones (tests/unit/test_farmhash.py holds fingerprints TF computed).

Example:
    >>> hex(fingerprint64(b"hello"))
    '0xb48be5a931380ce8'
"""

from __future__ import annotations

import functools

_M = (1 << 64) - 1
_K0, _K1, _K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F
_KMUL = 0x9DDFEA08EB382D69


def _f64(s: bytes, i: int) -> int:
    return int.from_bytes(s[i : i + 8], "little")


def _f32(s: bytes, i: int) -> int:
    return int.from_bytes(s[i : i + 4], "little")


def _rot(v: int, r: int) -> int:
    return v if r == 0 else ((v >> r) | (v << (64 - r))) & _M


def _smix(v: int) -> int:
    return v ^ (v >> 47)


def _h16(u: int, v: int, mul: int = _KMUL) -> int:
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = _f64(s, i), _f64(s, i + 8), _f64(s, i + 16), _f64(s, i + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


@functools.lru_cache(maxsize=65536)
def fingerprint64(s: bytes) -> int:
    """FarmHash's ``Fingerprint64`` (farmhashna ``Hash64``): TF's ``Fingerprint64`` and string hash buckets."""
    n = len(s)
    if n <= 16:
        if n >= 8:
            mul = _K2 + n * 2
            a = (_f64(s, 0) + _K2) & _M
            b = _f64(s, n - 8)
            c = (_rot(b, 37) * mul + a) & _M
            d = ((_rot(a, 25) + b) * mul) & _M
            return _h16(c, d, mul)
        if n >= 4:
            mul = _K2 + n * 2
            return _h16((n + (_f32(s, 0) << 3)) & _M, _f32(s, n - 4), mul)
        if n > 0:
            y = s[0] + (s[n >> 1] << 8)
            z = n + (s[n - 1] << 2)
            return (_smix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
        return _K2
    if n <= 32:
        mul = _K2 + n * 2
        a = (_f64(s, 0) * _K1) & _M
        b = _f64(s, 8)
        c = (_f64(s, n - 8) * mul) & _M
        d = (_f64(s, n - 16) * _K2) & _M
        return _h16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    if n <= 64:
        mul = _K2 + n * 2
        a = (_f64(s, 0) * _K2) & _M
        b = _f64(s, 8)
        c = (_f64(s, n - 8) * mul) & _M
        d = (_f64(s, n - 16) * _K2) & _M
        y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
        z = _h16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
        e = (_f64(s, 16) * mul) & _M
        f = _f64(s, 24)
        g = ((y + _f64(s, n - 32)) * mul) & _M
        h = ((z + _f64(s, n - 24)) * mul) & _M
        return _h16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M, (e + _rot((f + a) & _M, 18) + g) & _M, mul)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_smix((y * _K2 + 113) & _M) * _K2) & _M
    v0 = v1 = w0 = w1 = 0
    x = (x * _K2 + _f64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rot((x + y + v0 + _f64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v1 + _f64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w1
        y = (y + v0 + _f64(s, i + 40)) & _M
        z = (_rot((z + w0) & _M, 33) * _K1) & _M
        v0, v1 = _weak32(s, i, (v1 * _K1) & _M, (x + w0) & _M)
        w0, w1 = _weak32(s, i + 32, (z + w1) & _M, (y + _f64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    i = last64
    w0 = (w0 + ((n - 1) & 63)) & _M
    v0 = (v0 + w0) & _M
    w0 = (w0 + v0) & _M
    x = (_rot((x + y + v0 + _f64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v1 + _f64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w1 * 9) & _M
    y = (y + v0 * 9 + _f64(s, i + 40)) & _M
    z = (_rot((z + w0) & _M, 33) * mul) & _M
    v0, v1 = _weak32(s, i, (v1 * mul) & _M, (x + w0) & _M)
    w0, w1 = _weak32(s, i + 32, (z + w1) & _M, (y + _f64(s, i + 16)) & _M)
    z, x = x, z
    return _h16((_h16(v0, w0, mul) + _smix(y) * _K0 + z) & _M, (_h16(v1, w1, mul) + x) & _M, mul)


__all__ = ["fingerprint64"]


def _sip_rounds(n: int, v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    for _ in range(n):
        v0 = (v0 + v1) & _M
        v1 = _rot(v1, 64 - 13) ^ v0
        v0 = _rot(v0, 32)
        v2 = (v2 + v3) & _M
        v3 = _rot(v3, 64 - 16) ^ v2
        v0 = (v0 + v3) & _M
        v3 = _rot(v3, 64 - 21) ^ v0
        v2 = (v2 + v1) & _M
        v1 = _rot(v1, 64 - 17) ^ v2
        v2 = _rot(v2, 32)
    return v0, v1, v2, v3


def siphash24(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 of ``data`` under the 128-bit key ``(k0, k1)``: TF's ``to_hash_bucket_strong``.

    Keras's ``Hashing(salt=...)`` takes ``siphash24(salt0, salt1, utf8 bytes) % num_bins`` (checked
    against TensorFlow 2.21 in tests/conformance/test_vs_keras_layers.py).

    Example:
        >>> siphash24(7, 11, b"cat") % (1 << 62)
        104006874299542004
    """
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573
    n = len(data)
    end = n - n % 8
    for i in range(0, end, 8):
        m = int.from_bytes(data[i : i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = _sip_rounds(2, v0, v1, v2, v3)
        v0 ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(data[end:], "little")
    v3 ^= last
    v0, v1, v2, v3 = _sip_rounds(2, v0, v1, v2, v3)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = _sip_rounds(4, v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3
