"""unison: TensorFlow distribution strategies on PyTorch."""
