"""bench/sse_aiohttp.py: a streaming client of vLLM's benchmark kind, written for bench/llm.sh.

vLLM's `bench serve`, guidellm and their relatives cannot be installed here (PyPI is not reachable), so this is
a small client of the same kind, built only on Debian's python3-aiohttp: one asyncio task per stream, each
sending one streaming request at a time over a shared aiohttp session (keep-alive connections), reading the
response line by line (aiohttp's StreamReader iteration), decoding every event with json.loads and taking
timestamps with time.perf_counter() — time to first token and the gaps between tokens, as vLLM's request
functions do. It is not vLLM's code.

    python3 sse_aiohttp.py PORT STREAMS SECONDS TOKENS [lag]

With "lag" (hail serve --openai --send-time) it also measures its read lag: time.time_ns() when an event is
decoded minus the event's "hail_sent_ns", from WARMUP (2 s) on, as bench/ssefloor.c does. Prints one line, like
bench/ssefloor.c:
    events N requests M seconds S lag_p50_us A lag_p99_us B lag_max_us C
"""

import asyncio
import json
import sys
import time

import aiohttp

WARMUP = 2.0  # seconds: lag samples before this are left out (the client is still starting its streams)


async def stream_loop(session, url, payload, warm, deadline, stats, lags):
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        ttft, last, itl = 0.0, start, []
        async with session.post(url, json=payload) as resp:
            if resp.status != 200:
                raise RuntimeError(f"HTTP {resp.status}: {await resp.text()}")
            async for line in resp.content:
                line = line.strip()
                if not line:
                    continue
                data = line.decode("utf-8").removeprefix("data: ")
                if data == "[DONE]":
                    continue
                event = json.loads(data)
                now = time.perf_counter()
                if lags is not None and "hail_sent_ns" in event and now >= warm:
                    lags.append(time.time_ns() - event["hail_sent_ns"])
                choices = event.get("choices")
                if choices and choices[0].get("text"):
                    stats["events"] += 1
                    if ttft == 0.0:
                        ttft = now - start
                    else:
                        itl.append(now - last)
                    last = now
        stats["requests"] += 1


async def main():
    port, streams, secs, tokens = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    lags = [] if len(sys.argv) > 5 and sys.argv[5] == "lag" else None
    url = f"http://127.0.0.1:{port}/v1/completions"
    payload = {"model": "mock", "prompt": "hello world", "max_tokens": tokens, "ignore_eos": True, "stream": True}
    stats = {"events": 0, "requests": 0}
    start = time.perf_counter()
    deadline = start + secs
    connector = aiohttp.TCPConnector(limit=streams, keepalive_timeout=600)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        tasks = [asyncio.create_task(stream_loop(session, url, payload, start + WARMUP, deadline, stats, lags)) for _ in range(streams)]
        done, pending = await asyncio.wait(tasks, timeout=secs)
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for t in done:
            if t.exception() is not None:
                raise t.exception()
    out = f"events {stats['events']} requests {stats['requests']} seconds {time.perf_counter() - start:.3f}"
    if lags:
        lags.sort()
        pct = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))] / 1e3
        out += f" lag_p50_us {pct(0.5):.0f} lag_p99_us {pct(0.99):.0f} lag_max_us {lags[-1] / 1e3:.0f}"
    print(out)


asyncio.run(main())
