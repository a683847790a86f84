"""Conformance of a continuum server (worker or gateway) with Triton's own Python clients.

Run by crates/gateway/tests/it/tritonclient_conformance.rs against a live worker and a live gateway:

    python3 tritonclient_check.py --http HOST:PORT --grpc HOST:PORT --model NAME
        --max-batch N --expect FILE.json [--ca CA.pem [--client-cert C.pem --client-key K.pem]]

With --ca, both clients speak TLS (HTTPS, and gRPC with ssl=True) and trust that CA; with
--client-cert/--client-key they also present a client certificate.

Checks, over HTTP and gRPC: server and model metadata, the model configuration
(`max_batch_size`, dims), statistics, the repository index, inference with JSON and binary
tensors, batches up to the model's batch size, compressed requests, and every error path
(unknown model and version, wrong input name, datatype and shape, batch over the bound, huge
deadline). Outputs are compared with the expected ones in FILE.json (`input`, and `outputs`:
one per variant that may answer, computed by the test with the project's inference code). Prints one line per check and 'N passed, N failed'.
"""

import argparse
import json
import sys

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

RESULTS = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    RESULTS["passed" if ok else "failed"] += 1
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + str(detail) if detail and not ok else ''}")


def expect_error(name, fn, *fragments):
    try:
        fn()
    except InferenceServerException as e:
        msg = str(e)
        check(name, all(f in msg for f in fragments), msg)
        return
    except Exception as e:  # noqa: BLE001 - any other failure is a failed check
        check(name, False, f"{type(e).__name__}: {e}")
        return
    check(name, False, "no error raised")


def run(kind, client, mod, args, expected):
    model = args.model
    t = f"[{kind}]"
    check(f"{t} server live", client.is_server_live())
    check(f"{t} server ready", client.is_server_ready())
    check(f"{t} model ready", client.is_model_ready(model))
    meta = client.get_server_metadata()
    exts = meta["extensions"] if isinstance(meta, dict) else list(meta.extensions)
    check(f"{t} server metadata extensions", "statistics" in exts and "model_configuration" in exts, exts)

    md = client.get_model_metadata(model)
    if kind == "grpc":
        inputs = [(i.name, i.datatype, list(i.shape)) for i in md.inputs]
        outputs = [(o.name, o.datatype, list(o.shape)) for o in md.outputs]
    else:
        inputs = [(i["name"], i["datatype"], i["shape"]) for i in md["inputs"]]
        outputs = [(o["name"], o["datatype"], o["shape"]) for o in md["outputs"]]
    in_name, in_type, in_shape = inputs[0]
    out_name = outputs[0][0]
    check(f"{t} metadata input", in_type == "FP32" and in_shape[0] == -1, inputs)

    cfg = client.get_model_config(model)
    if kind == "grpc":
        mbs, dims = cfg.config.max_batch_size, list(cfg.config.input[0].dims)
    else:
        mbs, dims = cfg["max_batch_size"], cfg["input"][0]["dims"]
    check(f"{t} config max_batch_size", mbs == args.max_batch, mbs)
    check(f"{t} config dims exclude the batch", list(dims) == list(in_shape[1:]), dims)

    item = list(in_shape[1:])
    x = np.asarray(expected["input"], dtype=np.float32).reshape([args.max_batch] + item)
    # One expected output per variant that may serve the model (a gateway picks one).
    wants = [np.asarray(o, dtype=np.float32).reshape(args.max_batch, -1) for o in expected["outputs"]]

    def infer(n, binary=True, compression=None, params=None, name=in_name, dtype="FP32",
              data=None, model_name=model, version=""):
        data = x[:n] if data is None else data
        inp = mod.InferInput(name, list(data.shape), dtype)
        if kind == "http":
            inp.set_data_from_numpy(data, binary_data=binary)
            out = mod.InferRequestedOutput(out_name, binary_data=binary)
            kw = {"request_compression_algorithm": compression} if compression else {}
        else:
            inp.set_data_from_numpy(data)
            out = mod.InferRequestedOutput(out_name)
            kw = {"compression_algorithm": compression} if compression else {}
        return client.infer(model_name, [inp], outputs=[out], model_version=version,
                            parameters=params, **kw)

    def close(r, n):
        got = r.as_numpy(out_name)
        if got is None or got.shape[0] != n:
            return False
        return any(np.allclose(got.reshape(n, -1), w[:n], atol=1e-4) for w in wants)

    check(f"{t} infer one item (binary)", close(infer(1), 1))
    if kind == "http":
        check(f"{t} infer one item (JSON)", close(infer(1, binary=False), 1))
    check(f"{t} infer a full batch of {args.max_batch}", close(infer(args.max_batch), args.max_batch))
    for algo in (["gzip", "deflate"] if kind == "http" else ["gzip"]):
        check(f"{t} infer with {algo} request compression", close(infer(1, compression=algo), 1))

    stats = client.get_inference_statistics(model)
    if kind == "grpc":
        ms = stats.model_stats[0]
        count, success = ms.inference_count, ms.inference_stats.success.count
    else:
        ms = stats["model_stats"][0]
        count, success = ms["inference_count"], ms["inference_stats"]["success"]["count"]
    check(f"{t} statistics count the inferences", count >= 1 + args.max_batch and success >= 3, (count, success))
    # perf_analyzer (Triton's client tools) refuses statistics whose compute stages differ in count.
    if kind == "grpc":
        st = ms.inference_stats
        counts = {st.compute_input.count, st.compute_infer.count, st.compute_output.count}
    else:
        st = ms["inference_stats"]
        counts = {st[k]["count"] for k in ("compute_input", "compute_infer", "compute_output")}
    check(f"{t} statistics compute stages agree in count", len(counts) == 1, counts)

    idx = client.get_model_repository_index()
    names = [m.name for m in idx.models] if kind == "grpc" else [m["name"] for m in idx]
    check(f"{t} repository index lists the model", model in names, names)

    expect_error(f"{t} unknown model", lambda: client.get_model_metadata("no-such-model"), "unknown model")
    expect_error(f"{t} unknown version", lambda: infer(1, version="7"), "version")
    expect_error(f"{t} wrong input name", lambda: infer(1, name="nope"), "unknown input")
    expect_error(f"{t} wrong datatype", lambda: infer(1, dtype="FP64", data=x[:1].astype(np.float64)), "FP64")
    expect_error(f"{t} wrong shape", lambda: infer(1, data=x[:1].reshape(1, -1)), "shape")
    big = np.concatenate([x] * 2)[: args.max_batch + 1]
    expect_error(f"{t} batch over max_batch_size", lambda: infer(args.max_batch + 1, data=big), "batch")
    expect_error(f"{t} huge deadline", lambda: infer(1, params={"deadline_ms": 1.9e22}), "deadline_ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--http", required=True)
    ap.add_argument("--grpc", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--max-batch", type=int, required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--ca", help="TLS: the CA to trust (both clients then use TLS)")
    ap.add_argument("--client-cert", help="TLS: client certificate chain (PEM)")
    ap.add_argument("--client-key", help="TLS: client private key (PEM)")
    args = ap.parse_args()
    with open(args.expect) as f:
        expected = json.load(f)
    http_tls, grpc_tls = {}, {}
    if args.ca:
        opts = {"ca_certs": args.ca}
        if args.client_cert:
            opts.update(certfile=args.client_cert, keyfile=args.client_key)
        http_tls = {"ssl": True, "ssl_options": opts}
        grpc_tls = {"ssl": True, "root_certificates": args.ca,
                    "certificate_chain": args.client_cert, "private_key": args.client_key}
    run("http", httpclient.InferenceServerClient(args.http, **http_tls), httpclient, args, expected)
    run("grpc", grpcclient.InferenceServerClient(args.grpc, **grpc_tls), grpcclient, args, expected)
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 0 if RESULTS["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
