/* _cmodule.c — cgnn._C: the CPython extension over the public C API (include/cgnn.h). The Python
 * package (python/cgnn/__init__.py) builds PyG-style batches on it.
 *
 *   _C.Dataset(path, threads=0, task=-1, seed_assignment=0, rpc_timeout_s=60, node_feature=None)
 *                                       cgnn_dataset (cgnn_dataset_open_with)
 *   _C.dist_init() -> (rank, size), _C.dist_finalize()   the MPI job (cgnn_dist_*)
 *   _C.graph_store_run(path, S, fn, ...)  server-client mode (cgnn_graph_store_run): fn(Dataset) on
 *                                       the compute ranks, a Dataset valid during the call only
 *   _C.Loader(dataset, **options)       cgnn_loader (options: cgnn_loader_options' field names)
 *   loader.next() -> Batch | None       the GIL released while waiting for the batch
 *   batch.array(field, index) -> Array  a buffer (PEP 3118) over the batch's memory: no copy
 *
 * Lifetimes: an Array holds its Batch, a Batch its Loader, a Loader its Dataset, so memory is
 * never freed under a live view. A Batch's slot is released when the last reference to it (its
 * arrays, and the tensors torch.frombuffer made of them) goes; a loader holding `prefetch` batches
 * refuses the next one with an error naming the rule (cgnn.h), never an overwrite.
 * Errors: CGNN_ERROR_ARGUMENT -> ValueError, CGNN_ERROR_INPUT -> cgnn.DataError (a ValueError),
 * CGNN_ERROR_RUNTIME -> RuntimeError; the message is the library's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cgnn.h"

static PyObject *DataError;

static PyObject *raise(const cgnn_error *e) {
    PyObject *type = e->code == CGNN_ERROR_ARGUMENT ? PyExc_ValueError
                     : e->code == CGNN_ERROR_INPUT  ? DataError
                                                    : PyExc_RuntimeError;
    PyErr_SetString(type, e->message);
    return NULL;
}

/* ---- Dataset ---- */

typedef struct {
    PyObject_HEAD cgnn_dataset *ds; /* NULL once a borrowed one's run has ended */
    int borrowed;                   /* cgnn_graph_store_run's: closed by the library, not here */
} DatasetObject;

static int open_partitions; /* Datasets alive that are partitions (their close is collective) */

static void Dataset_dealloc(DatasetObject *self) {
    if (self->ds && !self->borrowed) {
        if (cgnn_dataset_is_partition(self->ds)) open_partitions--;
        cgnn_dataset_close(self->ds);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Dataset_init(DatasetObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "threads", "task", "seed_assignment", "rpc_timeout_s", "node_feature", NULL};
    const char *path;
    cgnn_dataset_options o;
    cgnn_dataset_options_init(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|iiidz", kwlist, &path, &o.threads, &o.task, &o.seed_assignment,
                                     &o.rpc_timeout_s, &o.node_feature))
        return -1;
    cgnn_error e;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cgnn_dataset_open_with(path, &o, &self->ds, &e);
    Py_END_ALLOW_THREADS if (rc != CGNN_OK) {
        raise(&e);
        return -1;
    }
    if (cgnn_dataset_is_partition(self->ds)) open_partitions++;
    return 0;
}

#define DS(self) (((DatasetObject *)(self))->ds)
/* A borrowed dataset after its graph-store run: RuntimeError. */
#define CHECK_OPEN(self, ret)                                                                               \
    do {                                                                                                  \
        if (!DS(self)) {                                                                                  \
            PyErr_SetString(PyExc_RuntimeError, "the dataset of a graph-store run is closed: the run has ended"); \
            return ret;                                                                                   \
        }                                                                                                 \
    } while (0)

static PyObject *Dataset_describe(PyObject *self, PyObject *unused) {
    CHECK_OPEN(self, NULL);
    cgnn_dataset *ds = DS(self);
    PyObject *d = PyDict_New(), *nt = PyList_New(0), *et = PyList_New(0), *tasks = PyList_New(0);
    for (int t = 0; t < cgnn_dataset_num_node_types(ds); t++) {
        PyObject *x = Py_BuildValue("{s:s,s:L,s:L}", "name", cgnn_dataset_node_type(ds, t), "num_nodes",
                                    (long long)cgnn_dataset_num_nodes(ds, t), "feature_dim",
                                    (long long)cgnn_dataset_feature_dim(ds, t));
        PyList_Append(nt, x);
        Py_DECREF(x);
    }
    for (int k = 0; k < cgnn_dataset_num_edge_types(ds); k++) {
        PyObject *x = Py_BuildValue("{s:s,s:L}", "name", cgnn_dataset_edge_type(ds, k), "num_edges",
                                    (long long)cgnn_dataset_num_edges(ds, k));
        PyList_Append(et, x);
        Py_DECREF(x);
    }
    for (int i = 0; i < cgnn_dataset_num_tasks(ds); i++) {
        PyObject *x = Py_BuildValue(
            "{s:s,s:s,s:i,s:L,s:(LLL)}", "name", cgnn_dataset_task_name(ds, i), "kind",
            cgnn_dataset_task_kind(ds, i) == CGNN_TASK_LINK_PREDICTION ? "link_prediction" : "node_classification",
            "type", cgnn_dataset_task_type(ds, i), "num_classes", (long long)cgnn_dataset_num_classes(ds, i),
            "split_sizes", (long long)cgnn_dataset_split_size(ds, i, 0), (long long)cgnn_dataset_split_size(ds, i, 1),
            (long long)cgnn_dataset_split_size(ds, i, 2));
        PyList_Append(tasks, x);
        Py_DECREF(x);
    }
    PyDict_SetItemString(d, "node_types", nt);
    PyDict_SetItemString(d, "edge_types", et);
    PyDict_SetItemString(d, "tasks", tasks);
    Py_DECREF(nt), Py_DECREF(et), Py_DECREF(tasks);
    return d;
}

static PyObject *Dataset_is_partition(PyObject *self, PyObject *unused) {
    CHECK_OPEN(self, NULL);
    return PyBool_FromLong(cgnn_dataset_is_partition(DS(self)));
}

static PyObject *Dataset_compute_rank(PyObject *self, PyObject *unused) {
    CHECK_OPEN(self, NULL);
    return PyLong_FromLong(cgnn_dataset_compute_rank(DS(self)));
}

static PyObject *Dataset_compute_size(PyObject *self, PyObject *unused) {
    CHECK_OPEN(self, NULL);
    return PyLong_FromLong(cgnn_dataset_compute_size(DS(self)));
}

static PyMethodDef Dataset_methods[] = {
    {"describe", Dataset_describe, METH_NOARGS, "node types, edge types and tasks as a dict"},
    {"is_partition", Dataset_is_partition, METH_NOARGS, "True for a part of a partitioned graph"},
    {"compute_rank", Dataset_compute_rank, METH_NOARGS, "this rank among the ranks that iterate (its loaders' slice)"},
    {"compute_size", Dataset_compute_size, METH_NOARGS, "the ranks that iterate"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DatasetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cgnn._C.Dataset",
    .tp_basicsize = sizeof(DatasetObject),
    .tp_dealloc = (destructor)Dataset_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Dataset(path, threads=0, task=-1, seed_assignment=0, rpc_timeout_s=60, node_feature=None): a GraphBolt on-disk dataset "
               "or a part of a partitioned one (cgnn_dataset_open_with)",
    .tp_methods = Dataset_methods,
    .tp_init = (initproc)Dataset_init,
    .tp_new = PyType_GenericNew,
};

/* ---- Loader ---- */

typedef struct {
    PyObject_HEAD PyObject *dataset; /* held: it outlives the loader */
    cgnn_loader *l;
} LoaderObject;

static void Loader_dealloc(LoaderObject *self) {
    cgnn_loader_free(self->l); /* (every batch holds the loader: none is left) */
    Py_XDECREF(self->dataset);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* o's field `name` from a Python int (a bool is an int); 0, or -1 with ValueError naming it. */
static int set_i64(int64_t *dst, PyObject *v, const char *name) {
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError, "%s: an integer is expected, got %R", name, v);
        return -1;
    }
    *dst = x;
    return 0;
}

static int set_int(int *dst, PyObject *v, const char *name) {
    int64_t x;
    if (set_i64(&x, v, name) != 0) return -1;
    if (x < INT32_MIN || x > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: %lld is out of range", name, (long long)x);
        return -1;
    }
    *dst = (int)x;
    return 0;
}

static int Loader_init(LoaderObject *self, PyObject *args, PyObject *kw) {
    PyObject *dataset;
    if (!PyArg_ParseTuple(args, "O!", &DatasetType, &dataset)) return -1;
    CHECK_OPEN(dataset, -1);
    cgnn_loader_options o;
    cgnn_loader_options_init(&o);
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (kw && PyDict_Next(kw, &pos, &key, &val)) {
        const char *k = PyUnicode_AsUTF8(key);
        int rc = 0;
        if (!k) return -1;
        if (!strcmp(k, "task")) rc = set_int(&o.task, val, k);
        else if (!strcmp(k, "split")) rc = set_int(&o.split, val, k);
        else if (!strcmp(k, "batch_size")) rc = set_i64(&o.batch_size, val, k);
        else if (!strcmp(k, "fanouts")) { /* a sequence: one per hop, seed side first */
            PyObject *seq = PySequence_Fast(val, "fanouts: a sequence of integers is expected");
            if (!seq) return -1;
            const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
            if (n > CGNN_MAX_LAYERS) {
                Py_DECREF(seq);
                PyErr_Format(PyExc_ValueError, "fanouts: %zd hops (at most %d)", n, CGNN_MAX_LAYERS);
                return -1;
            }
            o.num_layers = (int)n;
            for (Py_ssize_t h = 0; h < n && rc == 0; h++) rc = set_i64(&o.fanouts[h], PySequence_Fast_GET_ITEM(seq, h), k);
            Py_DECREF(seq);
        } else if (!strcmp(k, "edge_type_fanouts")) { /* [hop][edge type] */
            PyObject *hops = PySequence_Fast(val, "edge_type_fanouts: a sequence (per hop) of sequences is expected");
            if (!hops) return -1;
            const Py_ssize_t n = PySequence_Fast_GET_SIZE(hops);
            if (n > CGNN_MAX_LAYERS) rc = -1, PyErr_Format(PyExc_ValueError, "edge_type_fanouts: %zd hops (at most %d)", n, CGNN_MAX_LAYERS);
            for (Py_ssize_t h = 0; h < n && rc == 0; h++) {
                PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(hops, h), "edge_type_fanouts[h]: a sequence is expected");
                if (!row) {
                    rc = -1;
                    break;
                }
                const Py_ssize_t m = PySequence_Fast_GET_SIZE(row);
                if (m > CGNN_MAX_EDGE_TYPES) rc = -1, PyErr_Format(PyExc_ValueError, "edge_type_fanouts[%zd]: %zd edge types (at most %d)", h, m, CGNN_MAX_EDGE_TYPES);
                for (Py_ssize_t e = 0; e < m && rc == 0; e++)
                    rc = set_i64(&o.edge_type_fanouts[h][e], PySequence_Fast_GET_ITEM(row, e), k);
                Py_DECREF(row);
            }
            Py_DECREF(hops);
        } else if (!strcmp(k, "replace")) rc = set_int(&o.replace, val, k);
        else if (!strcmp(k, "shuffle")) rc = set_int(&o.shuffle, val, k);
        else if (!strcmp(k, "drop_last")) rc = set_int(&o.drop_last, val, k);
        else if (!strcmp(k, "seed")) {
            int64_t s;
            rc = set_i64(&s, val, k);
            o.seed = (uint64_t)s;
        } else if (!strcmp(k, "rank")) rc = set_int(&o.rank, val, k);
        else if (!strcmp(k, "world_size")) rc = set_int(&o.world_size, val, k);
        else if (!strcmp(k, "drop_uneven")) rc = set_int(&o.drop_uneven, val, k);
        else if (!strcmp(k, "num_workers")) rc = set_int(&o.num_workers, val, k);
        else if (!strcmp(k, "prefetch")) rc = set_int(&o.prefetch, val, k);
        else if (!strcmp(k, "normalize_features")) rc = set_int(&o.normalize_features, val, k);
        else if (!strcmp(k, "num_negatives")) rc = set_i64(&o.num_negatives, val, k);
        else if (!strcmp(k, "exclude_seed_edges")) rc = set_int(&o.exclude_seed_edges, val, k);
        else if (!strcmp(k, "anchor_batching")) rc = set_int(&o.anchor_batching, val, k);
        else if (!strcmp(k, "max_labels_per_anchor")) rc = set_i64(&o.max_labels_per_anchor, val, k);
        else {
            PyErr_Format(PyExc_TypeError, "Loader: unknown option '%s'", k);
            return -1;
        }
        if (rc != 0) return -1;
    }
    cgnn_error e;
    if (cgnn_loader_create(DS(dataset), &o, &self->l, &e) != CGNN_OK) {
        raise(&e);
        return -1;
    }
    Py_INCREF(dataset);
    self->dataset = dataset;
    return 0;
}

static PyObject *Loader_num_batches(PyObject *self, PyObject *unused) {
    return PyLong_FromLongLong(cgnn_loader_num_batches(((LoaderObject *)self)->l));
}

static PyObject *Loader_start_epoch(PyObject *self, PyObject *arg) {
    const long long epoch = PyLong_AsLongLong(arg);
    if (epoch == -1 && PyErr_Occurred()) return NULL;
    cgnn_error e;
    if (cgnn_loader_start_epoch(((LoaderObject *)self)->l, epoch, &e) != CGNN_OK) return raise(&e);
    Py_RETURN_NONE;
}

/* ---- Batch, Array ---- */

typedef struct {
    PyObject_HEAD PyObject *loader; /* held: it outlives the batch */
    cgnn_batch *b;
} BatchObject;

typedef struct {
    PyObject_HEAD PyObject *batch; /* held: the memory is the batch's */
    cgnn_array a;
} ArrayObject;

static PyTypeObject BatchType, ArrayType;

static PyObject *Loader_next(PyObject *self, PyObject *unused) {
    LoaderObject *lo = (LoaderObject *)self;
    cgnn_batch *b = NULL;
    cgnn_error e;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cgnn_loader_next(lo->l, &b, &e);
    Py_END_ALLOW_THREADS if (rc != CGNN_OK) return raise(&e);
    if (!b) Py_RETURN_NONE;
    BatchObject *bo = PyObject_New(BatchObject, &BatchType);
    if (!bo) {
        cgnn_batch_release(b);
        return NULL;
    }
    Py_INCREF(self);
    bo->loader = self;
    bo->b = b;
    return (PyObject *)bo;
}

static PyMethodDef Loader_methods[] = {
    {"num_batches", Loader_num_batches, METH_NOARGS, "batches of one epoch on this rank"},
    {"start_epoch", Loader_start_epoch, METH_O, "start_epoch(epoch)"},
    {"next", Loader_next, METH_NOARGS, "the epoch's next Batch, or None at its end"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LoaderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cgnn._C.Loader",
    .tp_basicsize = sizeof(LoaderObject),
    .tp_dealloc = (destructor)Loader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Loader(dataset, **options): cgnn_loader_create with cgnn_loader_options' field names",
    .tp_methods = Loader_methods,
    .tp_init = (initproc)Loader_init,
    .tp_new = PyType_GenericNew,
};

static void Batch_dealloc(BatchObject *self) {
    cgnn_batch_release(self->b); /* its slot goes back to the loader */
    Py_XDECREF(self->loader);
    PyObject_Free(self);
}

static PyObject *Batch_info(PyObject *self, PyObject *unused) {
    cgnn_batch_info bi;
    cgnn_batch_info_get(((BatchObject *)self)->b, &bi);
    return Py_BuildValue("{s:L,s:L,s:i,s:i,s:i,s:L,s:L,s:L,s:L,s:L}", "epoch", (long long)bi.epoch, "index",
                         (long long)bi.index, "num_layers", bi.num_layers, "num_node_types", bi.num_node_types,
                         "num_edge_types", bi.num_edge_types, "num_items", (long long)bi.num_items, "num_negatives",
                         (long long)bi.num_negatives, "num_listed", (long long)bi.num_listed, "num_seeds",
                         (long long)bi.num_seeds, "num_sampled_edges", (long long)bi.num_sampled_edges);
}

static PyObject *Batch_num_nodes(PyObject *self, PyObject *args) {
    int type, hop;
    if (!PyArg_ParseTuple(args, "ii", &type, &hop)) return NULL;
    return PyLong_FromLongLong(cgnn_batch_num_nodes(((BatchObject *)self)->b, type, hop));
}

/* array(field, index) -> Array, or None when the batch has it empty */
static PyObject *Batch_array(PyObject *self, PyObject *args) {
    int field, index;
    if (!PyArg_ParseTuple(args, "ii", &field, &index)) return NULL;
    cgnn_array a;
    cgnn_error e;
    if (cgnn_batch_array(((BatchObject *)self)->b, field, index, &a, &e) != CGNN_OK) return raise(&e);
    ArrayObject *ao = PyObject_New(ArrayObject, &ArrayType);
    if (!ao) return NULL;
    Py_INCREF(self);
    ao->batch = self;
    ao->a = a;
    return (PyObject *)ao;
}

static PyMethodDef Batch_methods[] = {
    {"info", Batch_info, METH_NOARGS, "the batch's counts as a dict"},
    {"num_nodes", Batch_num_nodes, METH_VARARGS, "num_nodes(type, hop)"},
    {"array", Batch_array, METH_VARARGS, "array(field, index) -> Array (a buffer over the batch's memory)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BatchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cgnn._C.Batch",
    .tp_basicsize = sizeof(BatchObject),
    .tp_dealloc = (destructor)Batch_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "one batch of a Loader; released when the last reference (its arrays' views included) goes",
    .tp_methods = Batch_methods,
};

static void Array_dealloc(ArrayObject *self) {
    Py_XDECREF(self->batch);
    PyObject_Free(self);
}

static int Array_getbuffer(PyObject *obj, Py_buffer *view, int flags) {
    ArrayObject *self = (ArrayObject *)obj;
    static char FMT[3][2] = {"i", "q", "f"};
    static const Py_ssize_t ITEM[3] = {4, 8, 4};
    const cgnn_array *a = &self->a;
    static char empty[8];
    view->obj = obj;
    Py_INCREF(obj);
    view->buf = a->data ? (void *)a->data : empty;
    view->itemsize = ITEM[a->dtype];
    view->ndim = a->ndim;
    view->shape = (Py_ssize_t *)PyMem_Malloc(2 * sizeof(Py_ssize_t));
    view->strides = (Py_ssize_t *)PyMem_Malloc(2 * sizeof(Py_ssize_t));
    view->shape[0] = (Py_ssize_t)a->shape[0], view->shape[1] = (Py_ssize_t)(a->ndim > 1 ? a->shape[1] : 1);
    view->strides[1] = view->itemsize;
    view->strides[0] = a->ndim > 1 ? view->itemsize * view->shape[1] : view->itemsize;
    view->len = view->itemsize * view->shape[0] * (a->ndim > 1 ? view->shape[1] : 1);
    view->readonly = 0; /* (the batch's own buffers: torch.frombuffer wants them writable; writes
                           change this batch only) */
    view->format = (flags & PyBUF_FORMAT) ? FMT[a->dtype] : NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}

static void Array_releasebuffer(PyObject *obj, Py_buffer *view) {
    PyMem_Free(view->shape);
    PyMem_Free(view->strides);
}

static PyBufferProcs Array_as_buffer = {Array_getbuffer, Array_releasebuffer};

static PyObject *Array_get_info(PyObject *obj, void *unused) {
    const cgnn_array *a = &((ArrayObject *)obj)->a;
    static const char *const NAMES[3] = {"int32", "int64", "float32"};
    return Py_BuildValue("{s:s,s:i,s:(LL),s:K}", "dtype", NAMES[a->dtype], "ndim", a->ndim, "shape",
                         (long long)a->shape[0], (long long)(a->ndim > 1 ? a->shape[1] : 1), "address",
                         (unsigned long long)(uintptr_t)a->data);
}

static PyGetSetDef Array_getset[] = {
    {"info", Array_get_info, NULL, "dtype, ndim, shape and the address of the data (cgnn's buffer)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ArrayType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cgnn._C.Array",
    .tp_basicsize = sizeof(ArrayObject),
    .tp_dealloc = (destructor)Array_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "one array of a Batch (the buffer protocol: numpy.frombuffer / torch.frombuffer share it)",
    .tp_as_buffer = &Array_as_buffer,
    .tp_getset = Array_getset,
};

/* ---- the MPI job ---- */

static PyObject *mod_dist_init(PyObject *self, PyObject *unused) {
    cgnn_error e;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cgnn_dist_init(&e);
    Py_END_ALLOW_THREADS if (rc != CGNN_OK) return raise(&e);
    return Py_BuildValue("(ii)", cgnn_dist_rank(), cgnn_dist_size());
}

static PyObject *mod_dist_finalize(PyObject *self, PyObject *unused) {
    Py_BEGIN_ALLOW_THREADS cgnn_dist_finalize();
    Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static PyObject *mod_open_partitions(PyObject *self, PyObject *unused) { return PyLong_FromLong(open_partitions); }

/* ---- server-client mode: cgnn_graph_store_run with a Python function on the compute ranks ---- */

typedef struct {
    PyObject *fn;       /* the caller's: fn(dataset) */
    PyObject *exc[3];   /* its exception (re-raised once the run has ended) */
} store_call;

/* The compute function: fn(Dataset) with the GIL; the dataset is borrowed for the call only. */
static int store_trampoline(void *ctx, cgnn_dataset *ds, cgnn_error *err) {
    store_call *c = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    DatasetObject *d = PyObject_New(DatasetObject, &DatasetType);
    int rc = 0;
    if (!d) {
        rc = -1;
    } else {
        d->ds = ds, d->borrowed = 1;
        PyObject *r = PyObject_CallFunctionObjArgs(c->fn, (PyObject *)d, NULL);
        if (!r) rc = -1;
        Py_XDECREF(r);
    }
    if (rc != 0) {
        PyErr_Fetch(&c->exc[0], &c->exc[1], &c->exc[2]);
        PyErr_NormalizeException(&c->exc[0], &c->exc[1], &c->exc[2]);
        PyObject *msg = c->exc[1] ? PyObject_Str(c->exc[1]) : NULL;
        err->code = CGNN_ERROR_RUNTIME;
        snprintf(err->message, sizeof err->message, "the compute function raised %s: %s",
                 c->exc[0] ? ((PyTypeObject *)c->exc[0])->tp_name : "an exception",
                 msg && PyUnicode_Check(msg) ? PyUnicode_AsUTF8(msg) : "?");
        Py_XDECREF(msg);
    }
    PyGC_Collect(); /* loaders and batches the function let go of, in cycles too */
    if (d && cgnn_dataset_num_loaders(ds) > 0) {
        /* a loader (or a batch, which holds its loader) outlived the function: its memory is the
         * library's dataset's, which the run closes now (cgnn.h: an abort) */
        fprintf(stderr, "cgnn.run_graph_store: the compute function returned with %d loader(s) still alive (kept in "
                "a global, or a batch or tensor of theirs kept): the run closes their dataset now; keep no loader, "
                "batch or batch tensor past the function\n", cgnn_dataset_num_loaders(ds));
        fflush(stderr);
        abort();
    }
    if (d) {
        d->ds = NULL; /* (kept by the caller: its methods now say the run has ended) */
        Py_DECREF(d);
    }
    PyGILState_Release(g);
    return rc;
}

static PyObject *mod_graph_store_run(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "num_storage_ranks", "fn", "threads", "task", "seed_assignment", "rpc_timeout_s",
                             NULL};
    const char *path;
    int S;
    store_call c = {NULL, {NULL, NULL, NULL}};
    cgnn_dataset_options o;
    cgnn_dataset_options_init(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "siO|iiid", kwlist, &path, &S, &c.fn, &o.threads, &o.task,
                                     &o.seed_assignment, &o.rpc_timeout_s))
        return NULL;
    if (!PyCallable_Check(c.fn)) return PyErr_Format(PyExc_TypeError, "fn: a callable is expected, got %R", c.fn);
    cgnn_error e = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cgnn_graph_store_run(path, S, &o, store_trampoline, &c, &e);
    Py_END_ALLOW_THREADS if (c.exc[0]) { /* the function's own exception, as it was raised */
        PyErr_Restore(c.exc[0], c.exc[1], c.exc[2]);
        return NULL;
    }
    if (rc != CGNN_OK) return raise(&e);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"graph_store_run", (PyCFunction)(void (*)(void))mod_graph_store_run, METH_VARARGS | METH_KEYWORDS,
     "graph_store_run(path, num_storage_ranks, fn, threads=0, task=-1, seed_assignment=0, rpc_timeout_s=60): "
     "server-client mode (cgnn_graph_store_run): fn(dataset) on the compute ranks, the storage ranks serve"},
    {"open_partitions", mod_open_partitions, METH_NOARGS, "partitions open in this process (Datasets alive)"},
    {"dist_init", mod_dist_init, METH_NOARGS, "joins the MPI job (cgnn_dist_init); returns (rank, size)"},
    {"dist_finalize", mod_dist_finalize, METH_NOARGS, "leaves the MPI job (cgnn_dist_finalize)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", "cgnn's C API (include/cgnn.h)", -1, module_methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__C(void) {
    if (PyType_Ready(&DatasetType) < 0 || PyType_Ready(&LoaderType) < 0 || PyType_Ready(&BatchType) < 0 ||
        PyType_Ready(&ArrayType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    DataError = PyErr_NewExceptionWithDoc("cgnn.DataError", "bad data: a dataset file, its metadata or a split",
                                          PyExc_ValueError, NULL);
    PyModule_AddObject(m, "DataError", DataError);
    Py_INCREF(&DatasetType), PyModule_AddObject(m, "Dataset", (PyObject *)&DatasetType);
    Py_INCREF(&LoaderType), PyModule_AddObject(m, "Loader", (PyObject *)&LoaderType);
    PyModule_AddIntConstant(m, "VERSION", cgnn_version());
    static const struct {
        const char *name;
        int v;
    } C[] = {{"FIELD_NODES", CGNN_FIELD_NODES},
             {"FIELD_FEATURES", CGNN_FIELD_FEATURES},
             {"FIELD_BLOCK_INDPTR", CGNN_FIELD_BLOCK_INDPTR},
             {"FIELD_BLOCK_INDICES", CGNN_FIELD_BLOCK_INDICES},
             {"FIELD_ITEMS", CGNN_FIELD_ITEMS},
             {"FIELD_LABELS", CGNN_FIELD_LABELS},
             {"FIELD_ITEM_ROWS", CGNN_FIELD_ITEM_ROWS},
             {"FIELD_LISTED_OFFSET", CGNN_FIELD_LISTED_OFFSET},
             {"FIELD_LISTED_COUNT", CGNN_FIELD_LISTED_COUNT}};
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) PyModule_AddIntConstant(m, C[i].name, C[i].v);
    return m;
}
