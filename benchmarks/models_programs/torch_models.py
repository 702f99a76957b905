"""The suite's models as plain PyTorch (the same architectures, torch's own idioms: NCHW modules
in channels_last memory for the image models, fused optimizers' defaults), and their steps.

``build_<model>(batch, bf16)`` returns ``(step, args)`` like ``keras_models``; under ``bf16`` the
forward runs in ``torch.autocast("cpu", torch.bfloat16)``, torch's mixed precision.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

CL = torch.channels_last


def _autocast(bf16: bool) -> Any:
    return torch.autocast("cpu", torch.bfloat16) if bf16 else contextlib.nullcontext()


def _step(model: nn.Module, loss_fn: Callable[..., Any], opt: torch.optim.Optimizer, bf16: bool) -> Callable[..., Any]:
    model.train()

    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        with _autocast(bf16):
            loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return step


class Bottleneck(nn.Module):
    """Keras's ResNet50 v1 block: 1x1, 3x3, 1x1 convolutions (with bias, as Keras's), BN eps 1.001e-5."""

    def __init__(self, cin: int, filters: int, stride: int, shortcut: bool) -> None:
        super().__init__()
        bn = lambda c: nn.BatchNorm2d(c, eps=1.001e-5, momentum=0.01)  # noqa: E731
        self.c1, self.b1 = nn.Conv2d(cin, filters, 1, stride), bn(filters)
        self.c2, self.b2 = nn.Conv2d(filters, filters, 3, 1, 1), bn(filters)
        self.c3, self.b3 = nn.Conv2d(filters, 4 * filters, 1), bn(4 * filters)
        self.short = nn.Sequential(nn.Conv2d(cin, 4 * filters, 1, stride), bn(4 * filters)) if shortcut else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return F.relu(y + (self.short(x) if self.short is not None else x))


def resnet50() -> nn.Module:
    blocks: list[nn.Module] = []
    cin = 64
    for filters, count, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(count):
            blocks.append(Bottleneck(cin, filters, stride if i == 0 else 1, i == 0))
            cin = 4 * filters
    return nn.Sequential(
        nn.Conv2d(3, 64, 7, 2, 3),
        nn.BatchNorm2d(64, eps=1.001e-5, momentum=0.01),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, 1),
        *blocks,
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(2048, 1000),
    )


def build_resnet50(batch: int, bf16: bool) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    model = resnet50().to(memory_format=CL)
    step = _step(model, F.cross_entropy, torch.optim.SGD(model.parameters(), 0.01), bf16)
    x = torch.randn(batch, 3, 224, 224).contiguous(memory_format=CL)
    return step, (x, torch.arange(batch) * 7 % 1000)


def build_cnn(batch: int, bf16: bool) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 5 * 5, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    ).to(memory_format=CL)
    step = _step(model, F.cross_entropy, torch.optim.Adam(model.parameters(), eps=1e-7), bf16)
    return step, (torch.randn(batch, 1, 28, 28).contiguous(memory_format=CL), torch.arange(batch) * 7 % 10)


def build_fcn(batch: int, bf16: bool) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    layers: list[nn.Module] = []
    cin = 1
    for _ in range(3):
        layers += [nn.Conv1d(cin, 64, 3, padding=1), nn.BatchNorm1d(64, eps=1e-3, momentum=0.01), nn.ReLU()]
        cin = 64
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(64, 2))
    step = _step(model, F.cross_entropy, torch.optim.Adam(model.parameters(), eps=1e-7), bf16)
    return step, (torch.randn(batch, 1, 500), torch.arange(batch) * 7 % 2)


class TextCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(20000, 128)
        self.c1, self.c2 = nn.Conv1d(128, 128, 7, 3), nn.Conv1d(128, 128, 7, 3)
        self.d1, self.d2 = nn.Linear(128, 128), nn.Linear(128, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = F.dropout(self.emb(ids), 0.5, self.training).transpose(1, 2)
        x = F.relu(self.c2(F.relu(self.c1(x)))).amax(-1)
        return self.d2(F.dropout(F.relu(self.d1(x)), 0.5, self.training))


def build_text(batch: int, bf16: bool) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    model = TextCNN()
    loss = lambda out, y: F.binary_cross_entropy_with_logits(out.float(), y)  # noqa: E731
    step = _step(model, loss, torch.optim.Adam(model.parameters(), eps=1e-7), bf16)
    ids = (torch.arange(batch * 500) * 7919 % 20000).reshape(batch, 500)
    return step, (ids, (torch.arange(batch) % 2).float().reshape(batch, 1))


class TransformerClassifier(nn.Module):
    def __init__(self, maxlen: int = 200, vocab: int = 20000, embed: int = 32, heads: int = 2, ff: int = 32) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, embed), nn.Embedding(maxlen, embed)
        # Keras's key_dim=32 per head: 2 heads of 32 project to 64 and back, as MultiHeadAttention does
        self.q, self.k, self.v = (nn.Linear(embed, heads * embed) for _ in range(3))
        self.o = nn.Linear(heads * embed, embed)
        self.heads, self.hd = heads, embed
        self.n1, self.n2 = nn.LayerNorm(embed, eps=1e-6), nn.LayerNorm(embed, eps=1e-6)
        self.f1, self.f2 = nn.Linear(embed, ff), nn.Linear(ff, embed)
        self.d1, self.d2 = nn.Linear(embed, 20), nn.Linear(20, 2)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        b, t = ids.shape
        x = self.tok(ids) + self.pos(torch.arange(t))
        split = lambda z: z.view(b, t, self.heads, self.hd).transpose(1, 2)  # noqa: E731
        a = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)))
        a = self.o(a.transpose(1, 2).reshape(b, t, -1))
        x = self.n1(x + F.dropout(a, 0.1, self.training))
        x = self.n2(x + F.dropout(self.f2(F.relu(self.f1(x))), 0.1, self.training))
        x = F.dropout(x.mean(1), 0.1, self.training)
        return self.d2(F.dropout(F.relu(self.d1(x)), 0.1, self.training))


def build_transformer(batch: int, bf16: bool) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    model = TransformerClassifier()
    step = _step(model, F.cross_entropy, torch.optim.Adam(model.parameters(), eps=1e-7), bf16)
    ids = (torch.arange(batch * 200) * 7919 % 20000).reshape(batch, 200)
    return step, (ids, torch.arange(batch) * 7 % 2)


def build_dcgan(batch: int, bf16: bool) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    bn = lambda c: nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)  # noqa: E731
    # Keras's 'same' transposed convolutions: padding 2, and output_padding 1 at stride 2
    gen = nn.Sequential(
        nn.Linear(100, 7 * 7 * 256, bias=False),
        nn.BatchNorm1d(7 * 7 * 256, eps=1e-3, momentum=0.01),
        nn.LeakyReLU(0.3),
        nn.Unflatten(1, (256, 7, 7)),
        nn.ConvTranspose2d(256, 128, 5, 1, 2, bias=False),
        bn(128),
        nn.LeakyReLU(0.3),
        nn.ConvTranspose2d(128, 64, 5, 2, 2, output_padding=1, bias=False),
        bn(64),
        nn.LeakyReLU(0.3),
        nn.ConvTranspose2d(64, 1, 5, 2, 2, output_padding=1, bias=False),
        nn.Tanh(),
    ).to(memory_format=CL)
    disc = nn.Sequential(
        nn.Conv2d(1, 64, 5, 2, 2),
        nn.LeakyReLU(0.3),
        nn.Dropout(0.3),
        nn.Conv2d(64, 128, 5, 2, 2),
        nn.LeakyReLU(0.3),
        nn.Dropout(0.3),
        nn.Flatten(),
        nn.Linear(128 * 7 * 7, 1),
    ).to(memory_format=CL)
    g_opt = torch.optim.Adam(gen.parameters(), 1e-4, eps=1e-7)
    d_opt = torch.optim.Adam(disc.parameters(), 1e-4, eps=1e-7)
    bce = F.binary_cross_entropy_with_logits

    def step(images: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        with _autocast(bf16):
            fake = gen(noise)
            real_out, fake_out = disc(images).float(), disc(fake).float()
            g_loss = bce(fake_out, torch.ones_like(fake_out))
            d_loss = bce(real_out, torch.ones_like(real_out)) + bce(fake_out, torch.zeros_like(fake_out))
        g_grads = torch.autograd.grad(g_loss, list(gen.parameters()), retain_graph=True)
        d_grads = torch.autograd.grad(d_loss, list(disc.parameters()))
        for p, g in zip(gen.parameters(), g_grads):
            p.grad = g
        for p, g in zip(disc.parameters(), d_grads):
            p.grad = g
        g_opt.step()
        d_opt.step()
        return g_loss

    return step, (torch.randn(batch, 1, 28, 28).contiguous(memory_format=CL), torch.randn(batch, 100))


BUILDERS = {
    "resnet50": build_resnet50,
    "cnn": build_cnn,
    "fcn": build_fcn,
    "text": build_text,
    "transformer": build_transformer,
    "dcgan": build_dcgan,
}
