"""One schema source for the built-in kinds: their fields and types read
from the installed ``kubernetes`` client's models (:mod:`.types`), the
kinds served (:mod:`.kinds`), field validation of write bodies
(:mod:`.fieldcheck`, called by the verbs through :mod:`.hooks`) and the
OpenAPI documents built from the same types (:mod:`.openapi`).
Server-side apply reads its model names and type strings here too.
"""
