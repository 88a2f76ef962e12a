"""TFRecord files of tf.train.Example without TensorFlow: the data tools
write them and the baselines read them back, with nothing but the standard
library.

A record is its length (uint64, little-endian), the length's masked CRC-32C,
the bytes, and their masked CRC-32C (TensorFlow's tfrecord format). An
Example is a protocol buffer: Features (field 1) holds a map from each key
(entry field 1) to a Feature (entry field 2), which holds a BytesList (1), a
FloatList (2) or an Int64List (3), each of them its values in field 1.
"""
import struct

_CRC_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def _crc32c(data):
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data):
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n):
    if n < 0:
        n += 1 << 64  # int64 values are written as their two's complement
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number, payload):
    """A length-delimited field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def encode_example(features):
    """features: {key: list of int, float or bytes/str values}. A list's
    first value decides its kind; an empty list is an empty Int64List."""
    entries = b""
    for key in sorted(features):
        values = features[key]
        if values and isinstance(values[0], (bytes, str)):
            payload = b"".join(
                _field(1, v.encode() if isinstance(v, str) else v) for v in values)
            feature = _field(1, payload)
        elif values and isinstance(values[0], float):
            feature = _field(2, _field(1, struct.pack("<%df" % len(values), *values)))
        elif values:
            feature = _field(3, _field(1, b"".join(_varint(int(v)) for v in values)))
        else:
            feature = _field(3, b"")
        entries += _field(1, _field(1, key.encode()) + _field(2, feature))
    return _field(1, entries)


def write(path, examples):
    """Writes each {key: values} of `examples` as one record."""
    with open(path, "wb") as out:
        for features in examples:
            data = encode_example(features)
            length = struct.pack("<Q", len(data))
            out.write(length + struct.pack("<I", _masked_crc(length)) + data +
                      struct.pack("<I", _masked_crc(data)))


def _read_varint(data, pos):
    n = shift = 0
    while True:
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, pos


def _fields(data):
    """(field number, payload) of each length-delimited field of `data`."""
    pos = 0
    while pos < len(data):
        tag, pos = _read_varint(data, pos)
        if tag & 7 != 2:
            raise ValueError("unexpected wire type %d" % (tag & 7))
        size, pos = _read_varint(data, pos)
        yield tag >> 3, data[pos:pos + size]
        pos += size


def decode_example(data):
    """{key: list of values}: bytes, floats or ints."""
    features = {}
    for _, entries in _fields(data):
        for _, entry in _fields(entries):
            key, values = None, []
            for number, payload in _fields(entry):
                if number == 1:
                    key = payload.decode()
                    continue
                for kind, value_list in _fields(payload):
                    for _, packed in _fields(value_list):
                        if kind == 1:
                            values.append(bytes(packed))
                        elif kind == 2:
                            values.extend(struct.unpack("<%df" % (len(packed) // 4), packed))
                        else:
                            pos = 0
                            while pos < len(packed):
                                v, pos = _read_varint(packed, pos)
                                values.append(v - (1 << 64) if v >= 1 << 63 else v)
            features[key] = values
    return features


def read(path):
    """Every Example of a TFRecord file, decoded; checks each CRC."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        (length_crc,) = struct.unpack_from("<I", data, pos + 8)
        record = data[pos + 12:pos + 12 + length]
        (record_crc,) = struct.unpack_from("<I", data, pos + 12 + length)
        if length_crc != _masked_crc(data[pos:pos + 8]) or record_crc != _masked_crc(record):
            raise ValueError("%s: corrupt record at byte %d" % (path, pos))
        yield decode_example(record)
        pos += 16 + length
