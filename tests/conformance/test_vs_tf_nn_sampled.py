"""``tf.nn``'s sparse lookups, accidental hits and candidate samplers against TensorFlow 2.21
(see tf_oracle.py for the rules)."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

BITS = "TF's Philox streams are not torch's generators: same distribution, dtype and shape, other values"


def _table(tf):
    return tf.reshape(tf.range(12, dtype=tf.float32), [4, 3])


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@same_as_tf("nn.embedding_lookup_sparse")
def test_embedding_lookup_sparse(tf, combiner):
    ids = tf.sparse.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([0, 3, 1], tf.int64), [3, 2])
    weights = tf.sparse.SparseTensor([[0, 0], [0, 1], [2, 0]], [2.0, 0.5, 3.0], [3, 2])
    return (
        tf.nn.embedding_lookup_sparse(_table(tf), ids, weights, combiner=combiner),
        tf.nn.embedding_lookup_sparse([_table(tf)[:2], _table(tf)[2:]], ids, None, combiner=combiner),
    )


@same_as_tf("nn.embedding_lookup_sparse", edge=True)
def test_embedding_lookup_sparse_max_norm(tf):
    ids = tf.sparse.SparseTensor([[0, 0], [1, 0]], tf.constant([3, 0], tf.int64), [2, 1])
    return tf.nn.embedding_lookup_sparse(_table(tf), ids, None, combiner="sum", max_norm=2.0)


@same_as_tf("nn.safe_embedding_lookup_sparse")
def test_safe_embedding_lookup_sparse(tf):
    ids = tf.sparse.SparseTensor([[0, 0], [0, 1], [2, 0], [2, 1]], tf.constant([0, -1, 1, 2], tf.int64), [3, 2])
    weights = tf.sparse.SparseTensor([[0, 0], [0, 1], [2, 0], [2, 1]], [2.0, 1.0, 0.0, 1.5], [3, 2])
    return (
        tf.nn.safe_embedding_lookup_sparse(_table(tf), ids, weights),
        tf.nn.safe_embedding_lookup_sparse(_table(tf), ids, None, combiner="sum", default_id=3),
    )


@same_as_tf("nn.safe_embedding_lookup_sparse", edge=True)
def test_safe_embedding_lookup_sparse_rank_3_ids(tf):
    ids = tf.sparse.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1]], tf.constant([2, 0, 3], tf.int64), [2, 2, 2])
    return tf.nn.safe_embedding_lookup_sparse(_table(tf), ids, None, combiner="mean")


@same_as_tf("nn.compute_accidental_hits")
def test_compute_accidental_hits(tf):
    true = tf.constant([[1, 2], [3, 4]], tf.int64)
    return tf.nn.compute_accidental_hits(true, tf.constant([2, 5, 3, 1], tf.int64), num_true=2)


@same_as_tf("nn.compute_accidental_hits", edge=True)
def test_compute_accidental_hits_none(tf):
    return tf.nn.compute_accidental_hits(tf.constant([[1]], tf.int64), tf.constant([7, 8], tf.int64), num_true=1)


@same_as_tf("nn.all_candidate_sampler", "nn.fixed_unigram_candidate_sampler", "nn.learned_unigram_candidate_sampler")
def test_nn_candidate_samplers_expected_counts(tf):
    classes = tf.constant([[0], [3]], tf.int64)
    fixed = tf.nn.fixed_unigram_candidate_sampler(classes, 1, 4, False, 4, unigrams=[1.0, 1.0, 2.0, 4.0])
    learned = tf.nn.learned_unigram_candidate_sampler(classes, 1, 4, False, 5, seed=31)
    everything = tf.nn.all_candidate_sampler(tf.constant([[0], [2]], tf.int64), 1, 3, True)
    return everything, fixed.true_expected_count, learned.true_expected_count


@same_as_tf(
    "nn.all_candidate_sampler",
    "nn.fixed_unigram_candidate_sampler",
    "nn.learned_unigram_candidate_sampler",
    edge=True,
    values=False,
    differs=BITS,
)
def test_nn_candidate_samplers_unique_draws(tf):
    classes = tf.constant([[1], [2]], tf.int64)
    return (
        tf.nn.fixed_unigram_candidate_sampler(classes, 1, 3, True, 4, unigrams=[1.0, 2.0, 3.0, 4.0]),
        tf.nn.learned_unigram_candidate_sampler(classes, 1, 3, True, 6, seed=37),
        tf.nn.all_candidate_sampler(tf.constant([[1], [0]], tf.int64), 1, 2, False),
    )


def _sampled_inputs(tf):
    weights = tf.reshape(tf.range(18, dtype=tf.float32) / 10.0, [6, 3])
    biases = tf.constant([0.1, -0.2, 0.3, 0.0, 0.5, -0.1])
    labels = tf.constant([[1], [4]], tf.int64)
    inputs = tf.constant([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]])
    sampled = (tf.constant([4, 0, 2], tf.int64), tf.constant([[0.4], [0.2]]), tf.constant([0.2, 0.5, 0.3]))
    return weights, biases, labels, inputs, sampled


@pytest.mark.parametrize("remove", [False, True])
@same_as_tf("nn.nce_loss", "nn.sampled_softmax_loss")
def test_sampled_losses_with_given_candidates(tf, remove):
    w, b, labels, x, sampled = _sampled_inputs(tf)
    return (
        tf.nn.nce_loss(w, b, labels, x, 3, 6, sampled_values=sampled, remove_accidental_hits=remove),
        tf.nn.sampled_softmax_loss(w, b, labels, x, 3, 6, sampled_values=sampled, remove_accidental_hits=remove),
    )


@same_as_tf("nn.nce_loss", "nn.sampled_softmax_loss", edge=True, values=False, differs=BITS)
def test_sampled_losses_draw_their_own_candidates(tf):
    w, b, labels, x, _ = _sampled_inputs(tf)
    return tf.nn.nce_loss(w, b, labels, x, 3, 6), tf.nn.sampled_softmax_loss(w, b, labels, x, 3, 6)
