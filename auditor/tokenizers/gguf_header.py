"""A GGUF file's header walked with every count and length checked against the file's size.

gguf's own reader (and transformers', and llama.cpp's) trusts the counts a header declares: a
112-byte file declaring an array of 2^60 elements makes them allocate or loop for a long time
before failing. ``read_gguf_header`` walks the header (key/value metadata, then the tensor
table) without allocating anything a count asks for: an array of N elements is refused when the
bytes left in the file cannot hold N of its smallest element, a string when its length runs
past the end, a tensor with more than ``MAX_DIMS`` dimensions or dimensions whose product is
not a plausible element count. Everything that reads a GGUF calls it first.

It returns the scalar metadata (strings, numbers, booleans) and, for arrays, their element
type and length (``GGUFArray``); arrays' contents are stepped over, not kept.
(Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md)
"""

from __future__ import annotations

import mmap
import stat
import struct
from dataclasses import dataclass, field
from pathlib import Path

from auditor.errors import TokenizerError
from auditor.limits import file_kind

MAGIC = b"GGUF"
VERSIONS = (1, 2, 3)
MAX_KEY_BYTES = 65535  # the format's own limit on a key
MAX_STRING_BYTES = 64 * 1024 * 1024  # a metadata string (a chat template, a merges entry)
MAX_DIMS = 8  # ggml uses at most 4
MAX_ARRAY_DEPTH = 4
MAX_ELEMENTS = 1 << 48  # a tensor's element count

# value type -> (struct format, size); 8 = string, 9 = array
_SCALARS = {
    0: ("<B", 1),
    1: ("<b", 1),
    2: ("<H", 2),
    3: ("<h", 2),
    4: ("<I", 4),
    5: ("<i", 4),
    6: ("<f", 4),
    7: ("<?", 1),
    10: ("<Q", 8),
    11: ("<q", 8),
    12: ("<d", 8),
}
STRING, ARRAY = 8, 9


class GGUFHeaderError(TokenizerError):
    """A GGUF header that cannot be read; ``reason`` is the part after the file name."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: not a readable GGUF file ({reason})")
        self.reason = reason


@dataclass(frozen=True)
class GGUFArray:
    element_type: int
    length: int
    offset: int = field(default=0, compare=False)  # where its first element starts in the file


@dataclass
class GGUFHeader:
    version: int
    tensor_count: int
    metadata: dict[str, object]  # scalars as values, arrays as GGUFArray


class _Walker:
    def __init__(self, data, path: Path, version: int):
        self.data, self.path, self.at = data, path, 8
        self.size = len(data)
        self.count_format, self.count_size = ("<I", 4) if version == 1 else ("<Q", 8)

    def fail(self, what: str) -> GGUFHeaderError:
        return GGUFHeaderError(self.path, f"{what} at byte {self.at} of {self.size}")

    def left(self) -> int:
        return self.size - self.at

    def unpack(self, fmt: str, size: int, what: str):
        if self.left() < size:
            raise self.fail(f"the header ends inside {what}")
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return value

    def count(self, what: str, smallest: int) -> int:
        value = self.unpack(self.count_format, self.count_size, what)
        if value * smallest > self.left():
            raise self.fail(f"{what} declares {value}, more than the {self.left()} bytes left can hold")
        return value

    def string(self, what: str, limit: int = MAX_STRING_BYTES, keep: bool = True) -> str | None:
        length = self.unpack(self.count_format, self.count_size, f"the length of {what}")
        if length > self.left():
            raise self.fail(f"{what} declares {length} bytes, more than the {self.left()} bytes left")
        if length > limit:
            raise self.fail(f"{what} declares {length} bytes, more than the limit of {limit}")
        start, self.at = self.at, self.at + length
        if not keep:
            return None
        try:
            return bytes(self.data[start : self.at]).decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"{what} is not UTF-8") from None

    def value(self, kind: int, what: str, depth: int = 0, keep: bool = True) -> object:
        if kind in _SCALARS:
            fmt, size = _SCALARS[kind]
            return self.unpack(fmt, size, what)
        if kind == STRING:
            return self.string(what, keep=keep)
        if kind != ARRAY:
            raise self.fail(f"{what} has unknown value type {kind}")
        if depth >= MAX_ARRAY_DEPTH:
            raise self.fail(f"{what} nests arrays deeper than {MAX_ARRAY_DEPTH}")
        element = self.unpack("<I", 4, f"the element type of {what}")
        if element not in _SCALARS and element not in (STRING, ARRAY):
            raise self.fail(f"{what} is an array of unknown value type {element}")
        smallest = (
            _SCALARS[element][1]
            if element in _SCALARS
            else (4 + self.count_size if element == ARRAY else self.count_size)
        )
        length = self.count(f"the length of array {what}", smallest)
        offset = self.at
        if element in _SCALARS:
            self.at += length * smallest  # fixed-size elements: stepped over at once (count() checked it)
        else:
            for _ in range(length):
                self.value(element, f"an element of {what}", depth + 1, keep=False)
        return GGUFArray(element, length, offset)


def read_gguf_header(path: Path) -> GGUFHeader:
    """The header of the GGUF at ``path``, or a one-line GGUFHeaderError saying where it breaks."""
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):  # (a FIFO would block the open below; a device never ends)
            raise GGUFHeaderError(path, f"not a regular file ({file_kind(mode)})")
        with path.open("rb") as handle:
            size = path.stat().st_size
            if size < 24:
                head = handle.read(8)
                if head[:4] != MAGIC:
                    raise GGUFHeaderError(path, "no GGUF magic")
                raise GGUFHeaderError(path, f"only {size} bytes")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _walk(data, path)
    except OSError as exc:
        raise GGUFHeaderError(path, f"cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # mmap of something that is not a regular file
        raise GGUFHeaderError(path, f"cannot map it: {exc}") from None


def _walk(data, path: Path) -> GGUFHeader:
    if data[:4] != MAGIC:
        raise GGUFHeaderError(path, "no GGUF magic")
    (version,) = struct.unpack_from("<I", data, 4)
    if version not in VERSIONS:
        raise GGUFHeaderError(path, f"GGUF version {version}; known: 1, 2, 3")
    walker = _Walker(data, path, version)
    tensor_count = walker.unpack(walker.count_format, walker.count_size, "the tensor count")
    # a key/value pair takes at least a key length, a value type and one byte
    kv_count = walker.count("the metadata count", walker.count_size + 4 + 1)
    if tensor_count * (walker.count_size + 4 + 4 + 8) > walker.left():
        raise walker.fail(f"the tensor count declares {tensor_count}, more than the file can hold")
    metadata: dict[str, object] = {}
    for number in range(kv_count):
        key = walker.string(f"metadata key {number}", MAX_KEY_BYTES) or ""
        kind = walker.unpack("<I", 4, f"the type of {key!r}")
        metadata[key] = walker.value(kind, repr(key[:80]))
    for number in range(tensor_count):
        walker.string(f"the name of tensor {number}", MAX_KEY_BYTES, keep=False)
        dims = walker.unpack("<I", 4, f"the dimension count of tensor {number}")
        if dims > MAX_DIMS:
            raise walker.fail(f"tensor {number} declares {dims} dimensions (at most {MAX_DIMS})")
        elements = 1
        for _ in range(dims):
            elements *= walker.unpack(
                walker.count_format, walker.count_size, f"a dimension of tensor {number}"
            )
            if elements > MAX_ELEMENTS:
                raise walker.fail(f"tensor {number} declares more than {MAX_ELEMENTS} elements")
        walker.unpack("<I", 4, f"the type of tensor {number}")
        walker.unpack("<Q", 8, f"the offset of tensor {number}")
    return GGUFHeader(version, tensor_count, metadata)


def string_element(path: Path, header: GGUFHeader, key: str, index: int) -> str | None:
    """Element ``index`` of the string array ``key`` of a header ``read_gguf_header`` checked
    (a token's text by its id), or None where there is no such array or element. The elements
    before it are stepped over by their lengths; nothing else of the file is read."""
    array = header.metadata.get(key)
    if not isinstance(array, GGUFArray) or array.element_type != STRING or not 0 <= index < array.length:
        return None
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            walker = _Walker(data, path, header.version)
            walker.at = array.offset
            for number in range(index):
                walker.string(f"element {number} of {key!r}", keep=False)
            return walker.string(f"element {index} of {key!r}")
    except (OSError, ValueError) as exc:
        raise GGUFHeaderError(path, f"cannot read: {exc}") from None
