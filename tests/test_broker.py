"""The file-system broker writes each message beside its queue and renames it in: a worker
polling the folder never sees a message that is not whole."""
import os

import pytest
from kombu import Connection

from config import broker


def _channel(tmp_path):
    folders = {name: tmp_path / name for name in ("queue", "processed")}
    for folder in folders.values():
        folder.mkdir()
    connection = Connection("filesystem://", transport="config.broker:Transport", transport_options={
        "data_folder_in": str(folders["queue"]), "data_folder_out": str(folders["queue"]),
        "processed_folder": str(folders["processed"]), "store_processed": False,
    })
    return connection.channel(), folders["queue"]


def test_a_message_is_in_its_queue_only_once_it_is_whole(tmp_path, monkeypatch):
    channel, queue = _channel(tmp_path)
    assert isinstance(channel, broker.Channel)
    seen_before_rename = []
    real_replace = os.replace

    def replace(source, target):
        seen_before_rename.extend(os.listdir(queue))
        assert os.path.getsize(source) > 0
        real_replace(source, target)

    monkeypatch.setattr(broker.os, "replace", replace)
    channel._put("judge", {"body": "x" * 1000})
    # While it was written, the message had only its partial name, which consumers skip.
    assert len(seen_before_rename) == 1 and seen_before_rename[0].endswith(".judge.msg" + broker.PARTIAL_SUFFIX)
    assert [name for name in os.listdir(queue)] == [seen_before_rename[0][: -len(broker.PARTIAL_SUFFIX)]]
    assert channel._get("judge") == {"body": "x" * 1000}
    assert os.listdir(queue) == []


def test_the_app_uses_it_for_a_filesystem_broker(settings):
    from config.celery import app

    if not settings.CELERY_BROKER_URL.startswith("filesystem://"):
        pytest.skip("a broker server is configured (the PostgreSQL phase of CI)")
    with app.connection_for_write() as connection:
        assert connection.get_transport_cls() is broker.Transport
