#!/usr/bin/python3
"""read_tb_events.py FILE [--expect JSON] [--scalar TAG STEP VALUE]... [--dump]

An independent reader of a TensorBoard event file (the Python standard library only: no
tensorflow, tensorboard or protobuf). It parses every TFRecord (uint64 LE length, masked
CRC32C of the length, data, masked CRC32C of the data), checks both CRCs of every record with
its own CRC32C, and decodes each Event protobuf by hand:

    Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
    Summary { repeated Value value = 1; }
    Value   { string tag = 1; float simple_value = 2; }

It always checks that the first record is a file_version "brain.Event:2" event, that the file
ends exactly at a record boundary, and that strings are valid UTF-8. Expectations:

  --expect JSON   a file (written by tests/test_tb_events.c):
                  {"file_version": "brain.Event:2",
                   "events": [{"step": S, "wall_time": W,
                               "values": [{"tag": T, "value": V, "bits": B}, ...]}, ...]}
                  the scalar events of the file, in order; "bits" (optional) is the float's
                  IEEE-754 bit pattern, compared exactly; "value" (a number, or null for NaN)
                  is compared to float precision.
  --scalar TAG STEP VALUE   (repeatable) some scalar event holds TAG at STEP with VALUE.
  --dump          prints every decoded event.

Exit status 0 when everything matches, 1 with a message on the first mismatch.
"""
import json
import math
import struct
import sys


class Mismatch(Exception):
    pass


def _crc32c_table():
    table = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ byte) & 0xFF]
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_records(blob):
    """Yields the data of every TFRecord in blob, checking framing and both CRCs."""
    off = 0
    index = 0
    while off < len(blob):
        if len(blob) - off < 12:
            raise Mismatch(f"record {index}: truncated header at byte {off}")
        header = blob[off:off + 8]
        (length,) = struct.unpack("<Q", header)
        (len_crc,) = struct.unpack("<I", blob[off + 8:off + 12])
        if len_crc != masked_crc32c(header):
            raise Mismatch(f"record {index}: length CRC {len_crc:#010x} != {masked_crc32c(header):#010x}")
        end = off + 12 + length + 4
        if end > len(blob):
            raise Mismatch(f"record {index}: length {length} runs past the end of the file")
        data = blob[off + 12:off + 12 + length]
        (data_crc,) = struct.unpack("<I", blob[off + 12 + length:end])
        if data_crc != masked_crc32c(data):
            raise Mismatch(f"record {index}: data CRC {data_crc:#010x} != {masked_crc32c(data):#010x}")
        yield data
        off = end
        index += 1


def read_varint(buf, off):
    result = 0
    shift = 0
    while True:
        if off >= len(buf):
            raise Mismatch("truncated varint")
        b = buf[off]
        off += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, off
        shift += 7
        if shift >= 70:
            raise Mismatch("varint longer than 10 bytes")


def fields(buf):
    """Yields (field number, wire type, value) of a protobuf message; value is an int for
    varints, bytes for fixed64/fixed32/length-delimited."""
    off = 0
    while off < len(buf):
        key, off = read_varint(buf, off)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, off = read_varint(buf, off)
        elif wire == 1:
            value, off = buf[off:off + 8], off + 8
        elif wire == 2:
            n, off = read_varint(buf, off)
            value, off = buf[off:off + n], off + n
        elif wire == 5:
            value, off = buf[off:off + 4], off + 4
        else:
            raise Mismatch(f"unsupported wire type {wire} (field {field})")
        if off > len(buf):
            raise Mismatch(f"field {field} runs past the end of its message")
        yield field, wire, value


def expect_wire(field, wire, want, what):
    if wire != want:
        raise Mismatch(f"{what}: field {field} has wire type {wire}, expected {want}")


def decode_value(buf):
    v = {"tag": None, "value": None, "bits": None}
    for field, wire, value in fields(buf):
        if field == 1:
            expect_wire(field, wire, 2, "Value.tag")
            v["tag"] = bytes(value).decode("utf-8")  # strict: invalid UTF-8 raises
        elif field == 2:
            expect_wire(field, wire, 5, "Value.simple_value")
            (v["bits"],) = struct.unpack("<I", value)
            (v["value"],) = struct.unpack("<f", value)
    return v


def decode_event(buf):
    ev = {"wall_time": None, "step": 0, "file_version": None, "values": None}
    for field, wire, value in fields(buf):
        if field == 1:
            expect_wire(field, wire, 1, "Event.wall_time")
            (ev["wall_time"],) = struct.unpack("<d", value)
        elif field == 2:
            expect_wire(field, wire, 0, "Event.step")
            ev["step"] = value - (1 << 64) if value >= 1 << 63 else value  # int64
        elif field == 3:
            expect_wire(field, wire, 2, "Event.file_version")
            ev["file_version"] = bytes(value).decode("utf-8")
        elif field == 5:
            expect_wire(field, wire, 2, "Event.summary")
            ev["values"] = []
            for f2, w2, v2 in fields(value):
                if f2 == 1:
                    expect_wire(f2, w2, 2, "Summary.value")
                    ev["values"].append(decode_value(v2))
    return ev


def same_float(got, want):
    if want is None:
        return math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= 1e-6 * max(1.0, abs(want))


def check(events, expect, scalars):
    if not events:
        raise Mismatch("the file holds no records")
    first = events[0]
    want_version = (expect or {}).get("file_version", "brain.Event:2")
    if first["file_version"] != want_version:
        raise Mismatch(f"record 0: file_version {first['file_version']!r}, expected {want_version!r}")
    if first["wall_time"] is None or not first["wall_time"] > 0:
        raise Mismatch("record 0: no wall_time")
    scalar_events = [e for e in events[1:] if e["values"] is not None]
    if len(scalar_events) != len(events) - 1:
        raise Mismatch("a record after the first holds no summary")
    if expect is not None:
        want_events = expect["events"]
        if len(scalar_events) != len(want_events):
            raise Mismatch(f"{len(scalar_events)} scalar events, expected {len(want_events)}")
        for i, (got, want) in enumerate(zip(scalar_events, want_events)):
            where = f"scalar event {i} (record {i + 1})"
            if got["step"] != want["step"]:
                raise Mismatch(f"{where}: step {got['step']}, expected {want['step']}")
            if "wall_time" in want and got["wall_time"] != want["wall_time"]:
                raise Mismatch(f"{where}: wall_time {got['wall_time']!r}, expected {want['wall_time']!r}")
            if len(got["values"]) != len(want["values"]):
                raise Mismatch(f"{where}: {len(got['values'])} values, expected {len(want['values'])}")
            for j, (gv, wv) in enumerate(zip(got["values"], want["values"])):
                if gv["tag"] != wv["tag"]:
                    raise Mismatch(f"{where}: value {j}: tag {gv['tag']!r}, expected {wv['tag']!r}")
                if gv["bits"] is None:
                    raise Mismatch(f"{where}: value {j} ({gv['tag']}): no simple_value")
                if "bits" in wv and gv["bits"] != wv["bits"]:
                    raise Mismatch(f"{where}: value {j} ({gv['tag']}): bits {gv['bits']:#010x}, "
                                   f"expected {wv['bits']:#010x}")
                if "value" in wv and not same_float(gv["value"], wv["value"]):
                    raise Mismatch(f"{where}: value {j} ({gv['tag']}): {gv['value']!r}, expected {wv['value']!r}")
    for tag, step, value in scalars:
        found = any(e["step"] == step and v["tag"] == tag and same_float(v["value"], value)
                    for e in scalar_events for v in e["values"])
        if not found:
            raise Mismatch(f"no scalar {tag!r} = {value} at step {step}")


def main(argv):
    args = argv[1:]
    path = None
    expect = None
    scalars = []
    dump = False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--expect" and i + 1 < len(args):
            with open(args[i + 1], encoding="utf-8") as f:
                expect = json.load(f)
            i += 2
        elif a == "--scalar" and i + 3 < len(args):
            v = args[i + 3]
            scalars.append((args[i + 1], int(args[i + 2]), None if v.lower() == "nan" else float(v)))
            i += 4
        elif a == "--dump":
            dump = True
            i += 1
        elif path is None and not a.startswith("--"):
            path = a
            i += 1
        else:
            print(__doc__, file=sys.stderr)
            return 2
    if path is None:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(path, "rb") as f:
            blob = f.read()
        events = [decode_event(r) for r in read_records(blob)]
        if dump:
            for e in events:
                print(json.dumps(e, ensure_ascii=False))
        check(events, expect, scalars)
    except (Mismatch, UnicodeDecodeError, struct.error) as e:
        print(f"read_tb_events.py: {path}: {e}", file=sys.stderr)
        return 1
    n_values = sum(len(e["values"]) for e in events if e["values"] is not None)
    print(f"read_tb_events.py: {path}: {len(events)} records, {n_values} scalars, all CRCs and fields OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
