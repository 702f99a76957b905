"""``tf.audio``: 16-bit PCM WAV files to float samples in [-1, 1) and back (TF's codec rules).

``decode_wav`` gives ``[samples, channels]`` float32 (each int16 sample / 32768) and the sample
rate; ``desired_channels`` repeats a mono file's channel or keeps the first channels,
``desired_samples`` truncates or pads with zeros. ``encode_wav`` writes 16-bit PCM, each sample
``round(x * 32768)`` clamped to int16, with the canonical 44-byte header.

Example:
    >>> import unison as tf
    >>> wav = tf.audio.encode_wav(tf.constant([[0.0], [0.5], [-0.25]]), 16000)
    >>> audio, rate = tf.audio.decode_wav(wav)
    >>> audio[:, 0].tolist(), int(rate)
    ([0.0, 0.5, -0.25], 16000)
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor

__all__ = ["decode_wav", "encode_wav"]


class DecodedWav(NamedTuple):
    """``tf.audio.decode_wav``'s result: ``audio`` ``[samples, channels]`` float32 and ``sample_rate`` int32."""

    audio: torch.Tensor
    sample_rate: torch.Tensor


def _bytes(contents: Any) -> bytes:
    if isinstance(contents, np.ndarray):
        contents = contents.item()
    if isinstance(contents, str):
        contents = contents.encode("latin-1")
    if not isinstance(contents, bytes):
        raise TypeError(
            f"tf.audio.decode_wav takes the bytes of a WAV file (a scalar string). Received: {type(contents).__name__}."
        )
    return contents


def _bad(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"tf.audio.decode_wav: {message}")


def decode_wav(
    contents: Any, desired_channels: int = -1, desired_samples: int = -1, name: str | None = None
) -> DecodedWav:
    """``tf.audio.decode_wav``: the samples and sample rate of a 16-bit PCM WAV file's bytes."""
    data = _bytes(contents)
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise _bad("the contents are not a RIFF WAVE file (header 'RIFF....WAVE' missing).")
    at, fmt, samples = 12, None, None
    while at + 8 <= len(data):
        chunk, size = data[at : at + 4], struct.unpack("<I", data[at + 4 : at + 8])[0]
        body = data[at + 8 : at + 8 + size]
        if chunk == b"fmt ":
            fmt = struct.unpack("<HHIIHH", body[:16])
        elif chunk == b"data":
            samples = body
            break
        at += 8 + size + (size & 1)
    if fmt is None or samples is None:
        raise _bad("the file has no 'fmt ' or no 'data' chunk.")
    audio_format, channels, rate, _, _, bits = fmt
    if audio_format != 1 or bits != 16:
        raise _bad(f"only 16-bit PCM is supported (as TF). Received format {audio_format} with {bits} bits per sample.")
    frames = len(samples) // (2 * channels)
    pcm = np.frombuffer(samples[: frames * 2 * channels], dtype="<i2").reshape(frames, channels)
    audio = torch.from_numpy(pcm.astype(np.float32) / 32768.0)
    if desired_channels is not None and int(desired_channels) > 0 and int(desired_channels) != channels:
        want = int(desired_channels)
        if channels == 1:
            audio = audio.repeat(1, want)
        elif want < channels:
            audio = audio[:, :want]
        else:
            raise _bad(f"cannot make {want} channels out of {channels} (only a mono file can be widened).")
    if desired_samples is not None and int(desired_samples) >= 0:
        want = int(desired_samples)
        audio = (
            audio[:want]
            if want <= audio.shape[0]
            else torch.cat([audio, audio.new_zeros(want - audio.shape[0], audio.shape[1])])
        )
    return DecodedWav(audio.contiguous(), torch.tensor(rate, dtype=torch.int32))


def encode_wav(audio: Any, sample_rate: Any, name: str | None = None) -> np.ndarray:
    """``tf.audio.encode_wav``: ``[samples, channels]`` float32 audio as the bytes of a 16-bit PCM WAV file."""
    x = to_tensor(audio)
    if x.dtype != torch.float32 or x.dim() != 2:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.audio.encode_wav takes float32 audio of shape [samples, channels]. Received {x.dtype} {list(x.shape)}.",
        )
    rate = int(to_tensor(sample_rate))
    frames, channels = x.shape
    pcm = (
        torch.clamp(torch.round(x.detach().cpu() * 32768.0), -32768, 32767)
        .to(torch.int16)
        .numpy()
        .astype("<i2")
        .tobytes()
    )
    header = b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16)
    header += b"data" + struct.pack("<I", len(pcm))
    return np.asarray(header + pcm, dtype=object)
