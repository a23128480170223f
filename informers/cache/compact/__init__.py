"""The compact storage option: a cache that keeps its objects encoded.

A parsed Kubernetes object costs about five times its JSON in Python dicts
(a 2 KB pod takes about 10 KB), so a cache of a million pods needs about
10 GB. :class:`~informers.cache.compact.store.CompactStore` keeps each object
as bytes instead -- by default zlib-compressed JSON, with a preset dictionary
of the words Kubernetes objects are made of
(:data:`~informers.cache.compact.dictionary.KUBERNETES_DICTIONARY`) -- and
decodes it when it is read. A bounded LRU (:class:`cachetools.LRUCache`) keeps
the decoded form of the objects read or written most recently (the *hot*
objects), so repeated reads of the same objects cost a dict lookup, not a
decode.

Indexes are computed from the decoded object once, when it arrives (the index
functions never run on a read), and map index values to keys exactly as the
default :class:`~informers.cache.store.Indexer` does: ``by_index`` is a dict lookup
plus, for each matching key, a hot-object lookup or a decode.

It speaks the :class:`~informers.cache.store.Indexer`'s whole contract, the keyed
layer the informer writes through included (``upsert``, ``delete_key``,
``replace_items``, ``get_many``, ``key_of``), so an informer, listers and
trackers use it unchanged::

    informer = SharedIndexInformer(lw, store=CompactStore)
    factory = SharedInformerFactory(api_client, store=CompactStore)
    # tuned: functools.partial(CompactStore, hot_objects=50_000, codec=JSONCodec())

The objects it returns are the hot object (the very dict that was written, or
the one decoded last) or a freshly decoded dict. Either way they are
**read-only**, as with the default store: a hot object mutated in place would
be seen changed by every later reader, and is never re-indexed. Unlike the
default store, two reads of the same key may return equal but distinct dicts
(the object left the hot set in between).

Codecs (:class:`~informers.cache.compact.codecs.Codec`):
:class:`~informers.cache.compact.codecs.ZlibCodec` (the default),
:class:`~informers.cache.compact.codecs.ZstdCodec` (zstd against a dictionary
learned from the first object: as small, several times faster; the ``fast``
extra), :class:`~informers.cache.compact.codecs.JSONCodec` (plain JSON bytes: orjson
when installed, else :mod:`json`) and
:class:`~informers.cache.compact.codecs.MsgpackCodec` (only when the optional
``msgpack`` package is installed). A codec must give back an object equal to
the one it encoded for every JSON document (dicts with string keys, lists,
strings, integers, floats, booleans, ``None``); tuples come back as lists. An
object it cannot encode raises :class:`~informers.ObjectEncodeError` and
changes nothing.

Through an informer, a list never exists decoded in full: the store offers
list buffers
(:meth:`~informers.cache.compact.store.CompactStore.new_list_buffer`, see
:mod:`informers.cache.listbuffer`), so the reflector keeps each page of a list as it
arrives transformed, encoded and indexed, the relist carries that
:class:`~informers.cache.compact.lists.EncodedList`, the store adopts it
without encoding again
(:meth:`~informers.cache.compact.store.CompactStore.replace_prepared`), and
each notification of it decodes its object only when a handler receives it.
The informer also pages such lists (:attr:`ReflectorConfig.paginate_lists
<informers.cache.reflector.ReflectorConfig.paginate_lists>`: a list at
resourceVersion 0 comes in one response), so the parsed objects alive at once
are about one page (500) plus what slow handlers have not consumed yet. For a
list, encoding and the index functions then run on the reflector's thread as
pages arrive (an index function's failure is still reported on the informer
loop's thread, when the list is applied).

What costs more than with the default store: every write encodes the object
(on the informer's loop thread); a read of an object that is not hot decodes
it; ``list()``, ``get_many`` and resyncs decode every object that is not hot
(without caching them, so a scan never evicts the hot set); a relist drops the
hot set; ``add_indexers`` decodes every object once. Measured figures and
when to choose it: the Performance guide ("Compact storage").

The package, one concept a module: :mod:`~informers.cache.compact.codecs`
(the codecs), :mod:`~informers.cache.compact.dictionary` (zlib's preset
dictionary), :mod:`~informers.cache.compact.lists` (the list buffers) and
:mod:`~informers.cache.compact.store` (the store, whose index bookkeeping is
the default store's, :mod:`informers.cache.index`).

Thread-safety: every method may be called from any thread. One lock guards
the encoded objects, the hot set (the LRU and its lock-free mirror, see
:class:`~informers.cache.compact.store.CompactStore`) and the indexes;
encoding, decoding, key and index functions run outside it. Readers get lists
they own and never see a half-applied write or relist.
"""

from informers.cache.compact.codecs import (
    Codec,
    JSONCodec,
    MsgpackCodec,
    ZlibCodec,
    ZstdCodec,
    available_codecs,
)
from informers.cache.compact.dictionary import KUBERNETES_DICTIONARY
from informers.cache.compact.lists import EncodedList
from informers.cache.compact.store import DEFAULT_HOT_OBJECTS, CompactStore

__all__ = [
    "DEFAULT_HOT_OBJECTS",
    "KUBERNETES_DICTIONARY",
    "Codec",
    "CompactStore",
    "EncodedList",
    "JSONCodec",
    "MsgpackCodec",
    "ZlibCodec",
    "ZstdCodec",
    "available_codecs",
]
