/* unison.ops._wirescan: tf.train.Example records read into columns in C, without the GIL.
 *
 * The compiled twin of unison/ops/example_wire.py's scan_columns (read that docstring first: the
 * encoding taken, the columns returned, and the two signals to the caller). The walk over the
 * records' bytes holds no Python object, so it runs with the GIL released: a tf.data pipeline's
 * reader, its consumer and other parse threads keep running while a batch is scanned. Only the
 * bytes values of BytesList features become Python objects, after the walk.
 *
 * scan_columns(records: tuple|list of bytes, keys: tuple of bytes, kinds: tuple of int)
 *   -> list of (values, counts) per key: values a bytearray of little-endian float32 (kind 2) or
 *      int64 (kind 3) values, or a list of bytes (kind 1); counts a bytearray of int64 per record,
 *      -1 where the record lacks the key;
 *   -> ("unusual", reason): an encoding left to the protobuf runtime (example_wire._Unusual);
 *   -> ("wrong", slot, record, kind): a list of another type (example_wire._WrongKind).
 *
 * scan_one(record: bytes, keys, kinds, sparse: tuple of bool) -> list of values per key (as above),
 *   None when a key is missing, empty or of another type (the caller's batch path handles those), or
 *   ("unusual", reason). For a key marked sparse the entry is (values, indices, dense_shape): a
 *   VarLenFeature's parts, the indices 0..n-1 and the shape [n] as int64 bytearrays, so the caller
 *   makes each tensor with one torch.frombuffer.
 *
 * Little-endian hosts only (float payloads are copied as they lie); the module refuses to load
 * elsewhere and the pure-Python reader is used.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { EMPTY = 0, BYTES = 1, FLOAT = 2, INT64 = 3 };

typedef struct {
    char *data;
    Py_ssize_t size;
    Py_ssize_t cap;
} Buf;

static int buf_grow(Buf *b, Py_ssize_t more) {
    if (b->size + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->size + more) cap *= 2;
    char *p = realloc(b->data, (size_t)cap);
    if (!p) return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

typedef struct {
    const char *reason; /* set: an unusual encoding */
    int wrong;          /* 1: a list of another kind, at wrong_slot / wrong_record / wrong_kind */
    Py_ssize_t wrong_slot, wrong_record;
    int wrong_kind;
    int nomem;
} Outcome;

typedef struct {
    Py_ssize_t n_keys;
    const char **key;
    Py_ssize_t *key_len;
    const int *kinds;
} Spec;

/* a length varint at *pos (up to 10 bytes, below end); -1 when truncated or too long */
static inline int64_t read_len(const unsigned char *d, Py_ssize_t end, Py_ssize_t *pos) {
    uint64_t value = 0;
    int shift = 0;
    Py_ssize_t p = *pos;
    while (1) {
        if (p >= end || shift > 63) return -1;
        unsigned char b = d[p++];
        value |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) break;
        shift += 7;
    }
    *pos = p;
    if (value > (uint64_t)PY_SSIZE_T_MAX / 2) return -1;
    return (int64_t)value;
}

static inline Py_ssize_t find_key(const Spec *spec, const unsigned char *k, Py_ssize_t len) {
    for (Py_ssize_t s = 0; s < spec->n_keys; s++) {
        if (spec->key_len[s] == len && (len == 0 || (spec->key[s][0] == (char)k[0] && memcmp(spec->key[s], k, (size_t)len) == 0)))
            return s;
    }
    return -1;
}

/* The varints of d[pos:end] appended to out as int64; their number, or -1 (a varint cut short or
 * longer than 10 bytes: protobuf's own rules; the caller reports the encoding as unusual). */
static Py_ssize_t varints(const unsigned char *d, Py_ssize_t pos, Py_ssize_t end, Buf *out, int *nomem) {
    if (buf_grow(out, (end - pos) * 8)) {
        *nomem = 1;
        return -1;
    }
    int64_t *dst = (int64_t *)(out->data + out->size);
    Py_ssize_t n = 0;
    while (pos < end) {
        unsigned char b = d[pos++];
        if (b < 0x80) {
            dst[n++] = b;
            continue;
        }
        uint64_t value = b & 0x7F;
        int shift = 7;
        while (1) {
            if (pos >= end) return -1;
            b = d[pos++];
            if (shift < 64) value |= (uint64_t)(b & 0x7F) << shift;
            if (b < 0x80) break;
            shift += 7;
            if (shift > 63) return -1; /* an 11th byte */
        }
        dst[n++] = (int64_t)value;
    }
    out->size += n * 8;
    return n;
}

typedef struct {
    Buf values;     /* numbers, or for BYTES triples of (record, offset, length) as Py_ssize_t */
    int64_t *count; /* per record; -1 missing */
    Py_ssize_t last;
    int float_bad;  /* a FloatList payload not a multiple of 4 bytes */
    int varint_bad; /* a varint cut short or too long */
    int empty;      /* a Feature with no list set (scan_one leaves those to the batch path) */
} Column;

#define UNUSUAL(why)          \
    do {                      \
        out->reason = (why);  \
        return;               \
    } while (0)

#define LEN(var, at)                                    \
    do {                                                \
        Py_ssize_t p_ = (at);                           \
        int64_t v_ = read_len(d, n, &p_);               \
        if (v_ < 0) UNUSUAL("truncated record");        \
        var = (Py_ssize_t)v_;                           \
        pos = p_;                                       \
    } while (0)

/* Every record's wanted lists into their columns: example_wire.scan_columns's walk, step by step. */
static void scan_records(const unsigned char **recs, const Py_ssize_t *sizes, Py_ssize_t rows, const Spec *spec,
                         Column *cols, Outcome *out) {
    for (Py_ssize_t i = 0; i < rows; i++) {
        const unsigned char *d = recs[i];
        Py_ssize_t n = sizes[i], pos = 0, length;
        if (!n) continue;
        if (d[0] != 0x0A) UNUSUAL("Example field");
        LEN(length, 1);
        if (pos + length != n) UNUSUAL("Example length");
        while (pos < n) {
            if (d[pos] != 0x0A) UNUSUAL("Features field");
            LEN(length, pos + 1);
            Py_ssize_t entry_end = pos + length;
            if (pos >= n) UNUSUAL("truncated record");
            if (d[pos] != 0x0A) UNUSUAL("map entry key");
            LEN(length, pos + 1);
            Py_ssize_t key_at = pos;
            pos += length;
            if (pos > entry_end || entry_end > n) UNUSUAL("map entry length");
            Py_ssize_t slot = find_key(spec, d + key_at, length);
            if (slot < 0) {
                pos = entry_end;
                continue;
            }
            Column *col = &cols[slot];
            if (col->last == i) UNUSUAL("repeated key");
            col->last = i;
            if (pos == entry_end) {
                col->count[i] = 0;
                col->empty = 1;
                continue;
            }
            if (d[pos] != 0x12) UNUSUAL("map entry value");
            LEN(length, pos + 1);
            if (pos + length != entry_end) UNUSUAL("map entry length");
            if (!length) {
                col->count[i] = 0;
                col->empty = 1;
                continue;
            }
            unsigned char tag = d[pos];
            int kind = tag >> 3;
            if ((tag & 7) != 2 || kind < 1 || kind > 3) UNUSUAL("Feature field");
            LEN(length, pos + 1);
            if (pos + length != entry_end) UNUSUAL("Feature length");
            if (kind != spec->kinds[slot]) {
                out->wrong = 1;
                out->wrong_slot = slot;
                out->wrong_record = i;
                out->wrong_kind = kind;
                return;
            }
            if (kind == BYTES) {
                int64_t found = 0;
                while (pos < entry_end) {
                    if (d[pos] != 0x0A) UNUSUAL("BytesList field");
                    LEN(length, pos + 1);
                    if (pos + length > entry_end) UNUSUAL("BytesList length");
                    if (buf_grow(&col->values, 3 * sizeof(Py_ssize_t))) {
                        out->nomem = 1;
                        return;
                    }
                    Py_ssize_t *t = (Py_ssize_t *)(col->values.data + col->values.size);
                    t[0] = i;
                    t[1] = pos;
                    t[2] = length;
                    col->values.size += 3 * sizeof(Py_ssize_t);
                    pos += length;
                    found++;
                }
                col->count[i] = found;
                continue;
            }
            if (pos == entry_end) {
                col->count[i] = 0;
                continue;
            }
            if (d[pos] != 0x0A) UNUSUAL("unpacked list");
            LEN(length, pos + 1);
            if (pos + length != entry_end) UNUSUAL("list in pieces");
            if (kind == FLOAT) {
                /* as the Python reader: a bad size is reported after the walk (a wrong kind first) */
                if (length & 3) {
                    col->float_bad = 1;
                    col->count[i] = 0;
                } else {
                    if (buf_grow(&col->values, length)) {
                        out->nomem = 1;
                        return;
                    }
                    memcpy(col->values.data + col->values.size, d + pos, (size_t)length);
                    col->values.size += length;
                    col->count[i] = length >> 2;
                }
            } else {
                Py_ssize_t got = varints(d, pos, entry_end, &col->values, &out->nomem);
                if (out->nomem) return;
                if (got < 0) {
                    col->varint_bad = 1;
                    got = 0;
                }
                col->count[i] = got;
            }
            pos = entry_end;
        }
    }
    for (Py_ssize_t s = 0; s < spec->n_keys; s++) {
        if (cols[s].float_bad) UNUSUAL("FloatList size");
        if (cols[s].varint_bad) UNUSUAL("varint");
    }
}

/* keys and kinds checked and viewed as C arrays (the tuples must outlive the Spec) */
static int make_spec(PyObject *keys, PyObject *kinds, Spec *spec, int *kind_buf, Py_ssize_t max_keys) {
    if (!PyTuple_Check(keys) || !PyTuple_Check(kinds) || PyTuple_GET_SIZE(keys) != PyTuple_GET_SIZE(kinds)) {
        PyErr_SetString(PyExc_TypeError, "keys and kinds must be tuples of the same length");
        return -1;
    }
    Py_ssize_t k = PyTuple_GET_SIZE(keys);
    if (k > max_keys) {
        PyErr_SetString(PyExc_ValueError, "too many keys");
        return -1;
    }
    spec->n_keys = k;
    for (Py_ssize_t s = 0; s < k; s++) {
        PyObject *key = PyTuple_GET_ITEM(keys, s);
        if (!PyBytes_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "keys must be bytes");
            return -1;
        }
        spec->key[s] = PyBytes_AS_STRING(key);
        spec->key_len[s] = PyBytes_GET_SIZE(key);
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(kinds, s));
        if (kind < BYTES || kind > INT64) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "kinds must be 1 (bytes), 2 (float) or 3 (int64)");
            return -1;
        }
        kind_buf[s] = (int)kind;
    }
    spec->kinds = kind_buf;
    return 0;
}

static PyObject *outcome_tuple(const Outcome *out) {
    if (out->nomem) return PyErr_NoMemory();
    if (out->wrong)
        return Py_BuildValue("(snni)", "wrong", out->wrong_slot, out->wrong_record, out->wrong_kind);
    return Py_BuildValue("(ss)", "unusual", out->reason);
}

/* one column's values as Python: a bytearray of numbers, or a list of bytes cut from the records */
static PyObject *column_values(const Column *col, int kind, const unsigned char **recs) {
    if (kind != BYTES) return PyByteArray_FromStringAndSize(col->values.data, col->values.size);
    Py_ssize_t m = col->values.size / (Py_ssize_t)(3 * sizeof(Py_ssize_t));
    PyObject *list = PyList_New(m);
    if (!list) return NULL;
    const Py_ssize_t *t = (const Py_ssize_t *)col->values.data;
    for (Py_ssize_t j = 0; j < m; j++, t += 3) {
        PyObject *b = PyBytes_FromStringAndSize((const char *)recs[t[0]] + t[1], t[2]);
        if (!b) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, j, b);
    }
    return list;
}

#define MAX_KEYS 4096

typedef struct {
    Spec spec;
    const char *key[MAX_KEYS];
    Py_ssize_t key_len[MAX_KEYS];
    int kinds[MAX_KEYS];
} SpecStore;

static PyObject *scan_columns(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *records, *keys, *kinds;
    if (!PyArg_ParseTuple(args, "OO!O!", &records, &PyTuple_Type, &keys, &PyTuple_Type, &kinds)) return NULL;
    SpecStore *store = PyMem_Malloc(sizeof(SpecStore));
    if (!store) return PyErr_NoMemory();
    store->spec.key = store->key;
    store->spec.key_len = store->key_len;
    PyObject *result = NULL;
    /* a tuple: its items stay alive while the GIL is released, whatever another thread does to a list */
    PyObject *held = PySequence_Tuple(records);
    const unsigned char **recs = NULL;
    Py_ssize_t *sizes = NULL;
    Column *cols = NULL;
    int64_t *counts = NULL;
    Py_ssize_t rows = 0, k = 0;
    if (!held || make_spec(keys, kinds, &store->spec, store->kinds, MAX_KEYS)) goto done;
    rows = PyTuple_GET_SIZE(held);
    k = store->spec.n_keys;
    recs = PyMem_Malloc((size_t)(rows ? rows : 1) * sizeof(*recs));
    sizes = PyMem_Malloc((size_t)(rows ? rows : 1) * sizeof(*sizes));
    cols = PyMem_Calloc((size_t)(k ? k : 1), sizeof(Column));
    counts = PyMem_Malloc((size_t)(rows > 0 && k > 0 ? rows * k : 1) * sizeof(int64_t));
    if (!recs || !sizes || !cols || !counts) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < rows; i++) {
        PyObject *r = PyTuple_GET_ITEM(held, i);
        if (!PyBytes_Check(r)) {
            PyErr_Format(PyExc_TypeError, "record %zd is %.80s, not bytes", i, Py_TYPE(r)->tp_name);
            goto done;
        }
        recs[i] = (const unsigned char *)PyBytes_AS_STRING(r);
        sizes[i] = PyBytes_GET_SIZE(r);
    }
    for (Py_ssize_t i = 0; i < rows * k; i++) counts[i] = -1;
    for (Py_ssize_t s = 0; s < k; s++) {
        cols[s].count = counts + s * rows;
        cols[s].last = -1;
    }
    Outcome out = {0};
    Py_BEGIN_ALLOW_THREADS
    scan_records(recs, sizes, rows, &store->spec, cols, &out);
    Py_END_ALLOW_THREADS
    if (out.reason || out.wrong || out.nomem) {
        result = outcome_tuple(&out);
        goto done;
    }
    result = PyList_New(k);
    if (!result) goto done;
    for (Py_ssize_t s = 0; s < k; s++) {
        PyObject *values = column_values(&cols[s], store->kinds[s], recs);
        PyObject *cnt = values ? PyByteArray_FromStringAndSize((const char *)cols[s].count, rows * 8) : NULL;
        PyObject *pair = cnt ? PyTuple_Pack(2, values, cnt) : NULL;
        Py_XDECREF(values);
        Py_XDECREF(cnt);
        if (!pair) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, s, pair);
    }
done:
    if (cols)
        for (Py_ssize_t s = 0; s < k; s++) free(cols[s].values.data);
    PyMem_Free(cols);
    PyMem_Free(counts);
    PyMem_Free(recs);
    PyMem_Free(sizes);
    PyMem_Free(store);
    Py_XDECREF(held);
    return result;
}

/* One record (map(parse_single_example)'s call per element): the walk with the GIL held (a record
 * is too short to be worth releasing it), values only, None unless every key has a list of its kind. */
/* a VarLenFeature's indices [[0], [1], ..., [n-1]] and dense shape [n], int64 */
static PyObject *sparse_parts(PyObject *values, Py_ssize_t n) {
    PyObject *indices = PyByteArray_FromStringAndSize(NULL, n * 8);
    PyObject *shape = indices ? PyByteArray_FromStringAndSize(NULL, 8) : NULL;
    if (!shape) {
        Py_XDECREF(indices);
        Py_DECREF(values);
        return NULL;
    }
    int64_t *at = (int64_t *)PyByteArray_AS_STRING(indices);
    for (Py_ssize_t j = 0; j < n; j++) at[j] = j;
    *(int64_t *)PyByteArray_AS_STRING(shape) = n;
    PyObject *parts = PyTuple_Pack(3, values, indices, shape);
    Py_DECREF(values);
    Py_DECREF(indices);
    Py_DECREF(shape);
    return parts;
}

static PyObject *scan_one(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *record, *keys, *kinds, *sparse;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyBytes_Type, &record, &PyTuple_Type, &keys, &PyTuple_Type, &kinds,
                          &PyTuple_Type, &sparse))
        return NULL;
    enum { SMALL = 32 };
    const char *key[SMALL];
    Py_ssize_t key_len[SMALL];
    int kind_buf[SMALL];
    int64_t count[SMALL];
    Column cols[SMALL];
    Spec spec = {0, key, key_len, kind_buf};
    if (make_spec(keys, kinds, &spec, kind_buf, SMALL)) return NULL;
    Py_ssize_t k = spec.n_keys;
    if (PyTuple_GET_SIZE(sparse) != k) {
        PyErr_SetString(PyExc_TypeError, "sparse must have one flag per key");
        return NULL;
    }
    memset(cols, 0, sizeof(Column) * (size_t)k);
    for (Py_ssize_t s = 0; s < k; s++) {
        count[s] = -1;
        cols[s].count = &count[s];
        cols[s].last = -1;
    }
    const unsigned char *rec = (const unsigned char *)PyBytes_AS_STRING(record);
    Py_ssize_t size = PyBytes_GET_SIZE(record);
    Outcome out = {0};
    scan_records(&rec, &size, 1, &spec, cols, &out);
    PyObject *result = NULL;
    if (out.nomem || out.reason) {
        result = outcome_tuple(&out);
        goto done;
    }
    for (Py_ssize_t s = 0; s < k; s++) {
        if (out.wrong || count[s] < 0 || cols[s].empty) {
            result = Py_None;
            Py_INCREF(result);
            goto done;
        }
    }
    result = PyList_New(k);
    if (!result) goto done;
    for (Py_ssize_t s = 0; s < k; s++) {
        PyObject *values = column_values(&cols[s], kind_buf[s], &rec);
        if (values && PyObject_IsTrue(PyTuple_GET_ITEM(sparse, s))) values = sparse_parts(values, (Py_ssize_t)count[s]);
        if (!values) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, s, values);
    }
done:
    for (Py_ssize_t s = 0; s < k; s++) free(cols[s].values.data);
    return result;
}

static PyMethodDef methods[] = {
    {"scan_columns", scan_columns, METH_VARARGS, "Every wanted feature's column over a batch of serialized Examples."},
    {"scan_one", scan_one, METH_VARARGS, "One serialized Example's wanted value lists."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_wirescan", "tf.train.Example wire scanner.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__wirescan(void) {
    const uint16_t probe = 1;
    if (*(const unsigned char *)&probe != 1) {
        PyErr_SetString(PyExc_ImportError, "unison.ops._wirescan reads little-endian hosts only");
        return NULL;
    }
    return PyModule_Create(&module);
}
