"""The session-archive benchmark workload (shared/reference/search-benchmark.md), built once.

``build_bench_archive(path)`` makes a home at ``path`` holding 20,000 sessions and exactly
1,000,000 messages (about 10% CJK, with tool calls), written through the archive API in
per-turn transactions, and returns the home folder. A finished build is marked with
``build.json`` (workload version and ingest figures) and reused as it is, so the archive
and TUI benchmarks share one copy under ./bench-data/.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import time
from pathlib import Path

from engine import FixedClock, open_home

WORKLOAD_VERSION = 1
DEFAULT_PATH = Path("bench-data") / "archive-1m"
SESSIONS, MESSAGES = 20_000, 1_000_000
SEED = 20261130
YEAR = 365 * 86400
START = 1764500000.0  # about a year before the fixed "now" of the tests

COMMON = ("the of and to a in is it you that he was for on are with as I his they be at one have this from or had by "
          "not word but what some we can out other were all there when up use your how said an each she which do "
          "their time if will way about many then them write would like so these her long make thing see him two has "
          "look more day could go come did number sound no most people my over know water than call first who may "
          "down side been now find any new work part take get place made live where after back little only round man "
          "year came show every good me give our under name very through just form sentence great think say help low "
          "line differ turn cause much mean before move right boy old too same tell does set three want air well also "
          "play small end put home read hand port large spell add even land here must big high such follow act why ask "
          "men change went light kind off need house picture try us again animal point mother world near build self "
          "earth father head stand own page should country found answer school grow study still learn plant cover food "
          "sun four between state keep eye never last let thought city tree cross farm hard start might story saw far "
          "sea draw left late run while press close night real life few north open seem together next white children "
          "begin got walk example ease paper group always music those both mark often letter until mile river car feet "
          "care second book carry took science eat room friend began idea fish mountain stop once base hear horse cut "
          "sure watch color face wood main enough plain girl usual young ready above ever red list though feel talk "
          "bird soon body dog family direct pose leave song measure door product black short numeral class wind").split()
DOMAIN = ("deploy database yaml timeout rollback pytest server service services servers config migration kubernetes "
          "rollout error log cache queue worker cluster container docker image build pipeline release branch commit "
          "merge review test fixture schema index query latency memory session skill token prompt model provider "
          "endpoint request response retry backoff lock thread process socket port proxy certificate secret env "
          "variable script shell terminal file path directory permission user admin backup restore snapshot metric "
          "alert dashboard trace span replica shard partition transaction commit vacuum checkpoint").split()
PHRASES = ["error log", "database migration", "kubernetes rollout", "config yaml", "rollback plan", "pytest failure",
           "timeout error", "deploy pipeline", "cache miss", "memory leak"]
CHINESE = ("部署 服务器 数据库 迁移 半夜 日志 数据 数据库迁移 回滚 配置 超时 测试 错误 用户 系统 网络 的 了 在 是 我们 "
           "需要 问题 完成 重启 监控 告警 版本 发布 缓存").split()
JAPANESE = ("デプロイ サーバー データベース ログ 移行 設定 エラー テスト ユーザー の は を に です ます した 再起動 監視 "
            "リリース キャッシュ 夜中 確認").split()
TOOLS = [("terminal", 30), ("read_file", 15), ("memory", 10), ("session_search", 8), ("skill_view", 8),
         ("search_files", 8), ("patch", 7), ("web_search", 6), ("write_file", 5), ("todo", 3)]
SOURCES = [("cli", 55), ("telegram", 20), ("discord", 15), ("cron", 10)]
MODELS = ["hermes-4-70b", "gpt-5-mini", "claude-sonnet-4-5", "qwen3-coder"]


def _vocabulary(rng: random.Random) -> list[str]:
    words = list(dict.fromkeys(COMMON[:60] + [w for pair in itertools.zip_longest(COMMON[60:], DOMAIN) for w in pair if w]))
    syllables = ["ka", "lo", "mi", "ran", "te", "su", "vo", "pel", "dor", "qui", "ben", "za", "nor", "tis", "gal", "mu"]
    while len(words) < 5000:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in words and not word.startswith("serv") and word != "zebra":
            words.append(word)
    return words


class Workload:
    """Deterministic text, tool calls and turns for the benchmark."""

    def __init__(self, seed: int = SEED):
        self.rng = random.Random(seed)
        self.words = _vocabulary(self.rng)
        self.cum = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(self.words))))
        self.tool_names = [t for t, _ in TOOLS]
        self.tool_cum = list(itertools.accumulate(w for _, w in TOOLS))
        self.count = 0

    def sentence(self) -> str:
        rng = self.rng
        words = rng.choices(self.words, cum_weights=self.cum, k=rng.randint(8, 60))
        if rng.random() < 0.15:
            words.insert(rng.randrange(len(words)), rng.choice(PHRASES))
        return " ".join(words).capitalize() + "."

    def cjk(self) -> str:
        pool = CHINESE if self.rng.random() < 0.6 else JAPANESE
        return "".join(self.rng.choices(pool, k=self.rng.randint(4, 14))) + ("。" if pool is CHINESE else "。")

    def text(self, sentences: int) -> str:
        """Message text; about 10% CJK (half all-CJK, half mixed) and one in 20,000 with 'zebra'."""
        self.count += 1
        rng = self.rng
        if rng.random() < 0.10:
            body = " ".join(self.cjk() for _ in range(sentences)) if rng.random() < 0.5 else \
                " ".join(self.sentence() if i % 2 else self.cjk() for i in range(max(2, sentences)))
        else:
            body = " ".join(self.sentence() for _ in range(sentences))
        if self.count % 20_000 == 7_777:
            body += " A zebra crossed the log."
        return body

    def arguments(self, name: str) -> dict:
        rng, s = self.rng, self.sentence
        path = f"/srv/{rng.choice(self.words[:300])}/{rng.choice(['config.yaml', 'main.py', 'README.md', 'deploy.sh'])}"
        return {
            "terminal": lambda: {"command": f"kubectl rollout status deploy/{rng.choice(DOMAIN)} --timeout={rng.randint(10, 600)}s"},
            "read_file": lambda: {"path": path, "offset": rng.randint(1, 400), "limit": 200},
            "memory": lambda: {"action": "add", "target": "memory", "content": s()},
            "session_search": lambda: {"query": " ".join(rng.choices(DOMAIN, k=2)), "limit": 3},
            "skill_view": lambda: {"name": f"{rng.choice(DOMAIN)}-{rng.choice(DOMAIN)}"},
            "search_files": lambda: {"pattern": rng.choice(DOMAIN), "path": path.rsplit("/", 1)[0]},
            "patch": lambda: {"path": path, "old_string": s()[:60], "new_string": s()[:60]},
            "web_search": lambda: {"query": s()[:80]},
            "write_file": lambda: {"path": path, "content": s()},
            "todo": lambda: {"todos": [{"content": s()[:50], "status": "pending"}]},
        }[name]()

    def turn(self, call_id: itertools.count) -> list[dict]:
        rng = self.rng
        messages = [{"role": "user", "content": self.text(rng.randint(1, 3))}]
        for _ in range(rng.choices([0, 1, 2, 3], weights=[30, 35, 20, 15])[0]):
            names = rng.choices(self.tool_names, cum_weights=self.tool_cum, k=1 if rng.random() < 0.8 else 2)
            calls = [{"id": f"call_{next(call_id)}", "type": "function",
                      "function": {"name": n, "arguments": json.dumps(self.arguments(n), ensure_ascii=False)}} for n in names]
            messages.append({"role": "assistant", "content": self.text(1) if rng.random() < 0.5 else None,
                             "tool_calls": calls})
            for call in calls:
                result = {"exit_code": 0, "output": self.text(1)[:300]}
                messages.append({"role": "tool", "content": json.dumps(result, ensure_ascii=False),
                                 "tool_name": call["function"]["name"], "tool_call_id": call["id"]})
        messages.append({"role": "assistant", "content": self.text(rng.randint(1, 5))})
        return messages


def _targets(rng: random.Random) -> list[int]:
    """20,000 session sizes in 20..80 summing to exactly 1,000,000."""
    sizes = [MESSAGES // SESSIONS] * SESSIONS
    for i in range(SESSIONS):
        j = rng.randrange(SESSIONS)
        delta = rng.randint(-30, 30)
        if 20 <= sizes[i] + delta <= 80 and 20 <= sizes[j] - delta <= 80:
            sizes[i] += delta
            sizes[j] -= delta
    return sizes


def build_bench_archive(path: str | os.PathLike = DEFAULT_PATH, *, sessions: int = SESSIONS,
                        progress: bool = True) -> Path:
    """Build (or reuse) the benchmark home at ``path``; returns the home folder."""
    root = Path(path)
    marker = root / "build.json"
    if marker.exists():
        info = json.loads(marker.read_text())
        if info.get("workload") == WORKLOAD_VERSION and info.get("sessions") == sessions:
            return root
    shutil.rmtree(root, ignore_errors=True)
    clock = FixedClock(START)
    home = open_home(root, clock=clock)
    archive = home.archive
    work = Workload()
    rng = random.Random(SEED + 1)
    sizes = _targets(rng)[:sessions]
    source_names, source_cum = [s for s, _ in SOURCES], list(itertools.accumulate(w for _, w in SOURCES))
    starts = sorted(START + rng.random() * YEAR for _ in range(sessions))
    call_id = itertools.count(1)
    written, started = 0, time.perf_counter()
    previous: str | None = None
    for index, (size, start) in enumerate(zip(sizes, starts)):
        clock.set(start)
        sid = f"bench_{index:05d}"
        source = rng.choices(source_names, cum_weights=source_cum)[0]
        parent = previous if previous and rng.random() < 0.1 else None  # some sessions continue after compression
        if parent:
            archive.end_session(parent, "compression")
        archive.create_session(sid, source=source, model=rng.choice(MODELS), parent_session_id=parent,
                               system_prompt="You are a helpful agent with memory.",
                               title=f"Session {index}: {' '.join(rng.choices(DOMAIN, k=2))}")
        stamp, left = start, size
        while left > 0:
            turn = work.turn(call_id)[:left]
            for message in turn:
                stamp += rng.randint(1, 30)
                message["timestamp"] = stamp
            archive.append_messages(sid, turn)
            left -= len(turn)
        written += size
        if previous and previous != parent and rng.random() < 0.9:
            archive.end_session(previous, "user_exit")
        previous = sid
        if progress and (index + 1) % 1000 == 0:
            rate = written / (time.perf_counter() - started)
            print(f"  built {index + 1:,} sessions / {written:,} messages ({rate:,.0f} msgs/s)", flush=True)
    ingest_s = time.perf_counter() - started
    index_started = time.perf_counter()
    archive.bigram_index.refresh()
    index_s = time.perf_counter() - index_started
    home.close()
    marker.write_text(json.dumps({"workload": WORKLOAD_VERSION, "sessions": sessions, "messages": written,
                                  "ingest_seconds": ingest_s, "cjk_index_seconds": index_s}, indent=2))
    return root
