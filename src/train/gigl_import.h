/* gigl_import.h (train/) — GiGL's preprocessed output (preprocessed_metadata.yaml + TFRecords of
 * tf.Examples) converted once into a DGL GraphBolt on-disk dataset (io/dataset.h) that cgnn
 * trains from. docs/DATASETS.md, "GiGL's preprocessed output", states every rule; in short:
 *
 * Input: GiGL's PreprocessedMetadata (proto/snapchat/research/gbml/preprocessed_metadata.proto,
 * GiGL fee4ba5) as YAML: condensedNodeTypeToPreprocessedMetadata {id: NodeMetadataOutput} and
 * condensedEdgeTypeToPreprocessedMetadata {id: EdgeMetadataOutput} (camelCase or snake_case
 * keys; an edge output with tfrecordUriPrefix / featureKeys at its own level, GiGL's older
 * schema, is read as its mainEdgeInfo). The task config names the types: graphMetadata's
 * condensedNodeTypeMap / condensedEdgeTypeMap (absent: the i-th nodeTypes / edgeTypes entry has
 * condensed id i), as GiGL's GraphMetadataPbWrapper maps them.
 *
 * URIs (tfrecordUriPrefix): file:// or a path; an absolute path is used as it is; a relative one
 * is tried against the current directory (GiGL's rule), then against the folder of
 * preprocessed_metadata.yaml and each folder above it, nearest first (so GiGL's repo-relative
 * test assets resolve from a copy anywhere); gs:// and other schemes are refused, naming the
 * field. A prefix that is a folder lists its files matching GiGL's pattern
 * `.*-of-.*\.tfrecord(\.gz)?$` or, when none does, every `*.tfrecord` / `*.tfrecord.gz` in it
 * (GiGL's Scala tools' data.tfrecord); a prefix that is not a folder selects the files of its
 * folder whose names start with its last component and end in .tfrecord / .tfrecord.gz. Files
 * are read in name order.
 *
 * Records: node records carry nodeIdKey (an int64_list of one value) and every featureKeys /
 * labelKeys entry; edge records srcNodeIdKey and dstNodeIdKey and the edge featureKeys. A
 * feature is a float_list or an int64_list (cast to float32, as GiGL's loader casts), of the
 * same width in every record; features are concatenated in featureKeys order. Node ids are
 * GiGL's enumerated ids: 0..N-1 for the N records of a node type, each exactly once; edge ids
 * lie in their node types' ranges. Anything else (a missing key, a bytes_list feature, a wrong
 * width, an id out of range or repeated, a bad TFRecord) is CGNN_ERR_INPUT naming the file and
 * the record.
 *
 * Output (written to a new folder, never into an input folder): graph.nodes / edges per type
 * (typed when graphMetadata declares more than one node or edge type, else untyped), node
 * features "feat" float32 (N, dim), main-edge features "feat" (E, dim), and one task:
 *   node classification: labels = the supervision node type's labelKeys (exactly one key, integer
 *     values >= 0; num_classes = max + 1); every node is split by GiGL's DistNodeSplitter (hash of
 *     the id, graph/edge_split.h; trainerArgs num_val / num_test, default 0.1 / 0.1);
 *   link prediction: pairs (anchor = src, dst) of the supervision edge type's positiveEdgeInfo
 *     records, or of its main edges when it has none (the supervision edge type as its own labels),
 *     split per anchor by GiGL's DistNodeAnchorLinkSplitter; negativeEdgeInfo records become
 *     labelled (label 0) pairs of the same anchors (GiGL's hard negatives; a negative whose anchor
 *     has no positive is dropped, with a log line).
 * An empty validation or test split is left out (a log line says so); an empty training split is
 * an error.
 */
#ifndef CGNN_GIGL_IMPORT_H
#define CGNN_GIGL_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "io/outguard.h"
#include "train/config.h"
#include "util/err.h"

/* The converter's format version: part of the cache fingerprint (bump it when the output of the
 * same input changes). */
#define GIGL_IMPORT_VERSION 1

typedef struct gigl_src gigl_src;

typedef struct gigl_stats {
    int typed;
    int num_node_types, num_edge_types;
    int64_t num_nodes, num_edges;      /* over all types */
    int64_t num_records;               /* every record read */
    int num_files;
    int64_t split_items[3];            /* train / validation / test items of the task */
} gigl_stats;

/* 1 when path is a GiGL preprocessed_metadata.yaml (a YAML file whose top level holds
 * condensedNodeTypeToPreprocessedMetadata or condensedEdgeTypeToPreprocessedMetadata, in either
 * spelling), or a folder holding one and no metadata.yaml; its file goes to yaml[cap]. 0
 * otherwise (a GraphBolt dataset, a missing path: dataset_open reports those). */
int gigl_is_preprocessed_metadata(const char *path, char *yaml, size_t cap);

/* Reads preprocessed_metadata.yaml, maps its condensed types to tc's names and lists every
 * TFRecord file (nothing is decoded yet). Returns 0, or -1 with *err (CGNN_ERR_INPUT naming the
 * YAML and the field). The caller owns *out (gigl_src_free). */
int gigl_src_open(gigl_src **out, const task_config *tc, const char *metadata_yaml, cgnn_err *err);
void gigl_src_free(gigl_src *s);
/* A fingerprint of everything the output depends on, as 16 hex digits + NUL: the YAML's bytes,
 * the types and task the config gives, num_val / num_test, GIGL_IMPORT_VERSION, and each
 * TFRecord file's path, size, inode and modification time (a rewritten file converts again). */
void gigl_src_fingerprint(const gigl_src *s, char hex[17]);
/* Adds the YAML, the task config and every TFRecord file to g as inputs. */
void gigl_src_add_inputs(const gigl_src *s, outguard *g);
/* Decodes everything and writes the dataset into dir (created if missing; an empty folder).
 * Returns 0, or -1 with *err; dir may then hold a partial output (callers write into a staging
 * folder and rename it). */
int gigl_src_convert(gigl_src *s, const char *dir, gigl_stats *st, cgnn_err *err);

/* The `cgnn train` hook: when tc->dataset_path names GiGL's preprocessed metadata, converts it
 * once into cgnn's cache folder (io/cachedir.h: "gigl/<fingerprint>", written through a staging
 * folder and renamed; an existing entry is reused) and points tc->dataset_path at the converted
 * dataset, with a log line naming it. Without a cache folder ($CGNN_CACHE_DIR=""), converts into
 * a temporary folder removed at exit. Returns 0 (also when there was nothing to do), or -1. */
int gigl_import_resolve(task_config *tc, cgnn_err *err);

#endif
