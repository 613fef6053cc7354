"""The file-system broker (the embedded default), with messages that appear whole.

kombu's file-system channel creates a message's file and then writes it. A worker listing the
folder in between moves the empty file away, fails to parse it and stops with "Unrecoverable
error: JSONDecodeError" (seen once in about forty judge-bench runs, at the 20 ms polling
interval settings.py sets). Here a message is written under a name no consumer reads and then
renamed into place, which is atomic within a folder. Settings select this class as
``CELERY_BROKER_TRANSPORT`` when the broker URL is ``filesystem://``.
"""
import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

PARTIAL_SUFFIX = ".part"  # "<ms>_<uuid>.<queue>.msg.part": not "<queue>.msg", so never read


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        """Put `payload` onto `queue`: written beside the queue, then renamed into it."""
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + PARTIAL_SUFFIX
        try:
            with open(partial, "wb", buffering=0) as handle:
                handle.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
