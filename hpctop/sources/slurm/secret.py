"""The slurmrestd JWT from a Kubernetes Secret (``--slurm-token-secret NS/NAME[:KEY]``), in memory only.

Why a Secret: on Slinky and SUNK clusters the operator mints the Slurm token into a Secret
(Slinky's ``Token`` resource writes a signed JWT under the key its ``secretRef`` names); asking
the user to copy it to a file would put a credential on disk. The Secret is read once through the
project's own Kubernetes client (:class:`~hpctop.sources.kube.transport.KubeClient`, read-only,
with the kubeconfig's credentials), base64-decoded and handed to the Slurm client; it is never
written anywhere, and its value never appears in an error message.

``KEY`` may be left out when the Secret holds exactly one key.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from dataclasses import dataclass

from hpctop.errors import PlainMessageError
from hpctop.sources.kube.connection import Connection, load_connection
from hpctop.sources.kube.errors import KubeError
from hpctop.sources.kube.transport import KubeClient

__all__ = ["SecretRef", "SecretTokenError", "read_token", "token_from_secret"]


class SecretTokenError(PlainMessageError):
    """The Secret named for the Slurm token cannot be read or holds no usable token."""


@dataclass(frozen=True, slots=True)
class SecretRef:
    namespace: str
    name: str
    key: str | None

    @classmethod
    def parse(cls, text: str) -> SecretRef:
        """``NS/NAME`` or ``NS/NAME:KEY``."""
        where, colon, key = text.partition(":")
        namespace, _, name = where.partition("/")
        if not namespace or not name or "/" in name or (colon and not key):
            raise SecretTokenError(f"a Slurm token Secret is NS/NAME[:KEY], not {text!r}")
        return cls(namespace, name, key or None)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" + (f":{self.key}" if self.key else "")


async def read_token(connection: Connection, ref: SecretRef, *, timeout: float = 10.0) -> str:
    """The token the Secret holds (one GET of the Secret, through a read-only client)."""
    path = f"/api/v1/namespaces/{ref.namespace}/secrets/{ref.name}"
    try:
        async with KubeClient(connection, read_timeout=timeout) as kube:
            body = await kube.get(path, {})
    except KubeError as exc:
        raise SecretTokenError(f"cannot read the Slurm token Secret {ref}: {exc}") from None
    try:
        data = json.loads(body).get("data") or {}
    except (ValueError, AttributeError):
        raise SecretTokenError(f"the Slurm token Secret {ref} is not a Secret") from None
    if not isinstance(data, dict) or not data:
        raise SecretTokenError(f"the Slurm token Secret {ref} holds no data")
    key = ref.key
    if key is None:
        if len(data) != 1:
            raise SecretTokenError(
                f"the Slurm token Secret {ref} holds {len(data)} keys: name one (NS/NAME:KEY)"
            )
        key = next(iter(data))
    if key not in data:
        raise SecretTokenError(f"the Slurm token Secret {ref} has no key {key!r}")
    try:
        token = base64.b64decode(str(data[key]), validate=True).decode().strip()
    except (binascii.Error, UnicodeDecodeError):
        raise SecretTokenError(
            f"the key {key!r} of the Slurm token Secret {ref} is not base64 text"
        ) from None
    token = token.removeprefix("SLURM_JWT=")
    if not token:
        raise SecretTokenError(f"the key {key!r} of the Slurm token Secret {ref} is empty")
    return token


def token_from_secret(ref: str, *, kubeconfig: str | None, context: str | None, timeout: float = 10.0) -> str:
    """``--slurm-token-secret``: load the kubeconfig as kubectl would and read the token."""
    parsed = SecretRef.parse(ref)

    async def read() -> str:
        try:
            connection = await load_connection(kubeconfig, context)
        except KubeError as exc:
            raise SecretTokenError(f"cannot reach Kubernetes for the Slurm token Secret: {exc}") from None
        return await read_token(connection, parsed, timeout=timeout)

    return asyncio.run(read())
