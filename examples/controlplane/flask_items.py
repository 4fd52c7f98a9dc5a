"""The control plane's REST API in Python (Flask), for the worked example of
docs/scenarios.md: the same /items resource as `hail serve`'s.

    POST   /items        201 {"id": "<id>"}, the JSON body stored
    GET    /items/<id>   200 {"id": "<id>", "data": <body>} or 404
    DELETE /items/<id>   204, or 404 when unknown
    GET    /items        200 {"count": N}

Run it with Flask's own threaded server (a thread per connection, HTTP/1.1
keep-alive): python3 flask_items.py --port 5000
"""

import argparse
import itertools
import threading

from flask import Flask, jsonify, request
from werkzeug.serving import WSGIRequestHandler

app = Flask(__name__)
items = {}
lock = threading.Lock()
ids = itertools.count(1)


@app.post("/items")
def create():
    body = request.get_json(silent=True)
    with lock:
        item_id = str(next(ids))
        items[item_id] = body
    return jsonify(id=item_id), 201, {"Location": "/items/" + item_id}


@app.get("/items")
def count():
    with lock:
        return jsonify(count=len(items))


@app.get("/items/<item_id>")
def get(item_id):
    with lock:
        if item_id not in items:
            return "", 404
        return jsonify(id=item_id, data=items[item_id])


@app.delete("/items/<item_id>")
def delete(item_id):
    with lock:
        if items.pop(item_id, None) is None:
            return "", 404
    return "", 204


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=5000)
    a = p.parse_args()
    WSGIRequestHandler.protocol_version = "HTTP/1.1"  # keep connections open
    app.run(host="127.0.0.1", port=a.port, threaded=True)
