"""Test tooling (molecule/kubernetes): print how many bootstrap tokens that can join a node exist
(usage "authentication") and the longest time, in seconds, one of them stays valid. kubeadm 1.20's
`token list -o json` prints one JSON object per token, one after the other. (kubeadm's proxy token
for the uploaded certificates' lifetime has no usage: it cannot authenticate.)"""
import datetime
import json
import subprocess

text = subprocess.run(["kubeadm", "token", "list", "-o", "json"], check=True, capture_output=True, text=True).stdout
decoder = json.JSONDecoder()
now = datetime.datetime.now(datetime.timezone.utc)
left = []
at = 0
while text[at:].strip():
    at = len(text) - len(text[at:].lstrip())
    token, at = decoder.raw_decode(text, at)
    if "authentication" not in (token.get("usages") or []):
        continue
    expires = datetime.datetime.fromisoformat(token["expires"].replace("Z", "+00:00"))
    left.append((expires - now).total_seconds())
print(len(left), int(max(left)) if left else 0)
