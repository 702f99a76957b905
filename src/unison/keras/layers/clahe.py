"""Keras 3's ``ContrastLimitedAdaptiveHistogramEqualization`` (CLAHE), batched on torch.

The image (read in ``value_range``, worked on in ``[0, 255]``) is cut into a ``tile_grid_size``
grid of tiles (padded symmetrically to whole tiles); each tile's 256-bin histogram per channel is
clipped at ``clip_limit * pixels / 256`` with the excess spread evenly, and its cumulative sum
becomes a lookup table; each pixel's value is the bilinear blend of the tables of the four
nearest tile centres, as Keras 3.15 computes it. It acts in training and at inference, and
returns the input's dtype (float results cast back, as Keras does).

Example:
    >>> import torch
    >>> layer = ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(1, 1))
    >>> layer(torch.tensor([[[[0.0], [255.0]]]])).flatten().tolist()
    [0.0, 255.0]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.layers.augmentation_color import to_range
from unison.keras.layers.image_preprocessing import ImagePreprocessingLayer
from unison.keras.utils.bounding_boxes import as_tensor

__all__ = ["ContrastLimitedAdaptiveHistogramEqualization"]


def _symmetric_index(size: int, padded: int, device: torch.device) -> torch.Tensor:
    """numpy's ``pad(mode="symmetric")`` as indices: ``a b c | c b a | a b c ...``."""
    index = torch.arange(padded, device=device) % (2 * size)
    return torch.where(index < size, index, 2 * size - 1 - index)


class ContrastLimitedAdaptiveHistogramEqualization(ImagePreprocessingLayer):
    """Contrast-limited adaptive histogram equalisation per channel (Keras 3's layer).

    Args:
        value_range: the images' range; clip_limit: the histogram clip, relative to a flat
        histogram (0 or less: no clipping); tile_grid_size: ``(rows, columns)`` of tiles.
    """

    def __init__(
        self,
        value_range: Any = (0, 255),
        clip_limit: float = 4.0,
        tile_grid_size: Any = (8, 8),
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(data_format=data_format, **kwargs)
        if not isinstance(tile_grid_size, (tuple, list)) or len(tile_grid_size) != 2:
            raise ValueError(
                f"`tile_grid_size` must be (rows, columns) of positive integers. Received: tile_grid_size={tile_grid_size}"
            )
        if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in tile_grid_size):
            raise ValueError(
                f"`tile_grid_size` must be (rows, columns) of positive integers. Received: tile_grid_size={tile_grid_size}"
            )
        self.value_range, self.clip_limit, self.tile_grid_size = value_range, clip_limit, tile_grid_size

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> torch.Tensor:
        x = as_tensor(images)
        dtype = x.dtype
        out = to_range(
            self._clahe(to_range(x.to(torch.float32), self.value_range, (0, 255))), (0, 255), self.value_range
        )
        return out if dtype == out.dtype else out.to(dtype)

    def _clahe(self, images: torch.Tensor) -> torch.Tensor:
        n, height, width, channels = images.shape
        grid_h, grid_w = self.tile_grid_size
        tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
        full_h, full_w = tile_h * grid_h, tile_w * grid_w
        rows = _symmetric_index(height, full_h, images.device)
        cols = _symmetric_index(width, full_w, images.device)
        padded = images[:, rows][:, :, cols]
        tiles = padded.reshape(n, grid_h, tile_h, grid_w, tile_w, channels).permute(0, 1, 3, 5, 2, 4)
        values = tiles.reshape(n, grid_h, grid_w, channels, tile_h * tile_w).to(torch.int32).clamp(0, 255).long()
        hist = torch.zeros(n, grid_h, grid_w, channels, 256, device=images.device)
        hist.scatter_add_(-1, values, torch.ones_like(values, dtype=hist.dtype))
        if self.clip_limit > 0:
            limit = float(self.clip_limit * (tile_h * tile_w) / 256.0)
            clipped = hist.clamp(0, limit)
            hist = clipped + (hist - clipped).sum(-1, keepdim=True) / 256.0
        cdf = hist.cumsum(-1)
        cdf_min = cdf.amin(-1, keepdim=True)
        denominator = tile_h * tile_w - cdf_min
        denominator = torch.where(denominator == 0, torch.ones_like(denominator), denominator)
        table = ((cdf - cdf_min) * 255.0 / denominator).clamp(0, 255)
        # one ring of edge tiles around the grid, so border pixels blend with themselves
        table = torch.cat([table[:, :1], table, table[:, -1:]], 1)
        table = torch.cat([table[:, :, :1], table, table[:, :, -1:]], 2)

        def axis(size: int, tile: int, grid: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            position = (torch.arange(size, dtype=torch.float32, device=images.device) - tile / 2.0) / tile + 1.0
            low = torch.floor(position)
            weight = position - low
            return low.clamp(0, grid + 1).long(), (low + 1).clamp(0, grid + 1).long(), weight

        y0, y1, wy = axis(full_h, tile_h, grid_h)
        x0, x1, wx = axis(full_w, tile_w, grid_w)
        pixels = padded.clamp(0, 255).to(torch.int32).long()
        b = torch.arange(n, device=images.device).reshape(n, 1, 1, 1)
        c = torch.arange(channels, device=images.device).reshape(1, 1, 1, channels)

        def look(ys: torch.Tensor, xs: torch.Tensor) -> torch.Tensor:
            return table[b, ys.reshape(1, -1, 1, 1), xs.reshape(1, 1, -1, 1), c, pixels]

        wy, wx = wy.reshape(1, -1, 1, 1), wx.reshape(1, 1, -1, 1)
        top = look(y0, x0) * (1.0 - wx) + look(y0, x1) * wx
        bottom = look(y1, x0) * (1.0 - wx) + look(y1, x1) * wx
        return (top * (1.0 - wy) + bottom * wy)[:, :height, :width]

    def get_config(self) -> dict[str, Any]:
        return self.keras_config(
            value_range=self.value_range, clip_limit=self.clip_limit, tile_grid_size=self.tile_grid_size
        )
