"""session_search recaps from an auxiliary model: concurrent, bounded, one failure falls back to the excerpt."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from engine.archive.session_search import session_search_tool
from engine.tools import ToolContext

SESSIONS = {
    "20261101_090000_aaaa01": (
        "Kafka consumers",
        "how do we deploy the kafka consumers?",
        "Deploy them with the consumers chart; drain partitions first.",
    ),
    "20261102_090000_aaaa02": (
        "Billing deploy",
        "how do we deploy billing?",
        "Billing deploys run make deploy-billing after the migration check.",
    ),
    "20261103_090000_aaaa03": (
        "Docs site",
        "how do we deploy the docs site?",
        "The docs deploy is a static upload to the docs bucket.",
    ),
}


def _seed(home) -> None:
    for session_id, (title, question, answer) in SESSIONS.items():
        home.archive.create_session(session_id, source="cli", model="offline", title=title)
        home.archive.append_messages(
            session_id, [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        )
        home.archive.end_session(session_id, "user_exit")


class RecapServer:
    """A loopback chat-completions endpoint: recaps every transcript, except that one about kafka fails."""

    def __init__(self):
        self.lock, self.in_flight, self.most, self.bodies, self.hold = threading.Lock(), 0, 0, [], 0.05
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with server.lock:
                    server.bodies.append(body)
                    server.in_flight += 1
                    server.most = max(server.most, server.in_flight)
                time.sleep(server.hold if "docs" in json.dumps(body) else 0.05)  # overlap; docs may be late
                text = body["messages"][-1]["content"]
                with server.lock:
                    server.in_flight -= 1
                if "kafka" in text:
                    status, reply = 500, {"error": {"message": "recap backend crashed"}}
                else:
                    title = "billing" if "billing" in text else "docs"
                    status, reply = (
                        200,
                        {
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {
                                        "role": "assistant",
                                        "content": f"Recap: the user asked how to deploy {title}.",
                                    },
                                }
                            ]
                        },
                    )
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the late recap: the client already gave up on it

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _configure(home, text: str) -> None:
    home.config_path.write_text(text, encoding="utf-8")
    home.reload_config()


def _search(home, server: RecapServer, settings: str) -> dict:
    """Search the three seeded sessions for "deploy" with recaps from ``server``; ``{title: result}``."""
    _seed(home)
    try:
        _configure(
            home,
            "auxiliary:\n  session_search:\n    backend: openai\n    model: recap-mini\n"
            f"    base_url: {server.base_url}\n{settings}",
        )
        found = session_search_tool(home, {"query": "deploy", "limit": 3}, ToolContext())
    finally:
        server.close()
    assert found["success"] and found["count"] == 3
    return {r["title"]: r for r in found["results"]}


def test_recaps_come_back_for_three_sessions_with_one_failing(home):
    server = RecapServer()
    by_title = _search(home, server, "    max_concurrency: 2\n    timeout: 20\n")
    assert by_title["Billing deploy"]["recap"] == "Recap: the user asked how to deploy billing."
    assert by_title["Docs site"]["recap"] == "Recap: the user asked how to deploy docs."
    assert {by_title[t]["recap_source"] for t in ("Billing deploy", "Docs site")} == {"model"}
    kafka = by_title["Kafka consumers"]
    assert kafka["recap_source"] == "excerpt" and "recap backend crashed" in kafka["recap_error"]
    assert kafka["recap"].startswith("USER: how do we deploy the kafka consumers?")
    assert len(server.bodies) == 3 and server.most <= 2  # one request per session, never more than the bound
    assert all(
        b["model"] == "recap-mini" and "Search topic: deploy" in b["messages"][-1]["content"] for b in server.bodies
    )


def test_recaps_are_off_by_default_and_the_offline_model_writes_extractive_ones(home):
    _seed(home)
    plain = session_search_tool(home, {"query": "deploy"}, ToolContext())
    assert plain["count"] == 3 and not any("recap" in r for r in plain["results"])
    _configure(home, "auxiliary:\n  session_search:\n    backend: offline\n")
    found = session_search_tool(home, {"query": "billing deploy"}, ToolContext())
    recap = next(r for r in found["results"] if r["title"] == "Billing deploy")
    assert recap["recap_source"] == "model"
    assert recap["recap"] == (
        "The user asked: how do we deploy billing?\n"
        "Relevant: Billing deploys run make deploy-billing after the migration check."
    )


def test_a_late_recap_falls_back_to_the_excerpt_without_holding_the_search(home):
    server = RecapServer()
    server.hold = 3.0  # the docs recap answers long after the timeout
    by_title = _search(home, server, "    timeout: 0.5\n")
    assert by_title["Docs site"]["recap_source"] == "excerpt" and by_title["Docs site"]["recap_error"]
    assert by_title["Billing deploy"]["recap_source"] == "model"


def test_a_key_variable_named_but_not_set_gives_excerpts_that_name_it_and_sends_nothing(home, monkeypatch):
    """``auxiliary.session_search.api_key_env`` naming an unset variable is refused as ``model.api_key_env``
    is: no recap request goes out without its key; each result keeps its excerpt and says why."""
    monkeypatch.delenv("WB_RECAP_KEY_UNSET", raising=False)
    server = RecapServer()
    by_title = _search(home, server, "    api_key_env: WB_RECAP_KEY_UNSET\n")
    assert server.bodies == []
    for result in by_title.values():
        assert result["recap_source"] == "excerpt" and result["recap"].startswith("USER: how do we deploy")
        assert result["recap_error"].startswith(
            "$WB_RECAP_KEY_UNSET is not set, and auxiliary.session_search.api_key_env in config.yaml names it"
        )


def test_recaps_failing_for_one_reason_are_one_warning_line_on_the_cli(home, monkeypatch):
    """Each failed recap was its own warning: a dead or keyless endpoint gave one identical stderr line
    (one notification in the TUI) per result. Now one line per reason, with how many it failed."""
    from tests.cli_support import ran

    monkeypatch.delenv("WB_RECAP_KEY_UNSET", raising=False)
    _seed(home)
    _configure(home, "auxiliary:\n  session_search:\n    backend: openai\n    api_key_env: WB_RECAP_KEY_UNSET\n")
    status, out, err = ran("run", "--home", str(home.root), "--message", "what did we discuss about deploy")
    assert status == 0 and "Here is what we discussed about deploy" in out
    warned = [line for line in err.splitlines() if "recap" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: session_search: 3 recaps failed ($WB_RECAP_KEY_UNSET")
