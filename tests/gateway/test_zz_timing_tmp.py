import time, httpx
from tests.gateway.test_v1_priority import *  # noqa

def test_timing(prioritized, mapped):
    key = key_for("hana", "high")
    for i in range(5):
        t=time.monotonic(); r = chat(prioritized, key); t1=time.monotonic()
        engine_records(mapped); t2=time.monotonic()
        print("chat", round(t1-t,3), "records", round(t2-t1,3))
