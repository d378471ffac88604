"""Key rotation and fail-closed reading for LangGraph's ``EncryptedSerializer``.

>>> from langgraph_codec_keys import encrypted_serializer
>>> serde = encrypted_serializer()          # doctest: +SKIP
>>> saver = SqliteSaver(conn, serde=serde)  # doctest: +SKIP

See README.md.
"""

from .cipher import (
    AES_NAME,
    DEFAULT_MAX_DECOMPRESSED,
    ZLIB_AES_NAME,
    CipherError,
    KeyRingCipher,
    PlaintextRefused,
)
from .keys import (
    ENV_FALLBACK_KEYS,
    ENV_KEY,
    ENV_KEY_PREVIOUS,
    ENV_STRICT,
    KEY_ALPHABET,
    MAX_PREVIOUS_KEYS,
    KeyConfig,
    KeyConfigError,
    generate_key,
    key_from_entry,
    keys_from_env,
    strict_from_env,
)
from .serde import (
    DecryptingSerializer,
    decrypting,
    FailClosedJsonPlusSerializer,
    FailClosedSerializer,
    encrypted_serializer,
    fail_closed,
    is_fail_closed,
)

__version__ = "0.1.0"

__all__ = [
    "AES_NAME",
    "DEFAULT_MAX_DECOMPRESSED",
    "ENV_FALLBACK_KEYS",
    "ENV_KEY",
    "ENV_KEY_PREVIOUS",
    "ENV_STRICT",
    "KEY_ALPHABET",
    "MAX_PREVIOUS_KEYS",
    "ZLIB_AES_NAME",
    "CipherError",
    "DecryptingSerializer",
    "decrypting",
    "FailClosedJsonPlusSerializer",
    "FailClosedSerializer",
    "KeyConfig",
    "KeyConfigError",
    "KeyRingCipher",
    "PlaintextRefused",
    "encrypted_serializer",
    "fail_closed",
    "generate_key",
    "is_fail_closed",
    "key_from_entry",
    "keys_from_env",
    "strict_from_env",
]
