"""Network namespaces for simulated nodes whose pods run for real (``vbridge.nodesim.runtime``).

``NodeNetwork.create(tag)`` makes one namespace with a veth pair: the host end gets the first
address of a /28 taken from 198.51.100.0/24 (TEST-NET-2; not
TEST-NET-1: this VM's own eth0 sits in 192.0.2.0/24), skipping any /28 a route already covers, the namespace end
the second, and the rest are pod IPs (``/32`` addresses inside the namespace). The host reaches
them by the connected route of the /28; nothing leaves the machine. ``delete`` removes it all.
Needs root (the test bed runs as root).
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import os
import subprocess

from vbridge.nodesim import runtime as node_runtime

_RANGE = ipaddress.ip_network("198.51.100.0/24")


def _ip(*args: str) -> str:
    return subprocess.run(["ip", *args], check=True, capture_output=True, text=True).stdout


def _taken() -> list[ipaddress.IPv4Network]:
    nets = []
    for line in _ip("-4", "route", "show").splitlines():
        word = line.split()[0]
        with contextlib.suppress(ValueError):
            if word != "default":
                nets.append(ipaddress.ip_network(word, strict=False))
    return nets


@dataclasses.dataclass
class NodeNetwork:
    name: str
    host_if: str
    subnet: ipaddress.IPv4Network

    @property
    def path(self) -> str:
        return f"/run/netns/{self.name}"

    @property
    def host_ip(self) -> str:
        return str(self.subnet[1])

    @property
    def pod_ips(self) -> tuple[str, ...]:
        return tuple(str(ip) for ip in list(self.subnet.hosts())[2:])

    def node_net(self) -> node_runtime.NodeNet:
        return node_runtime.NodeNet(host_ip=self.host_ip, pod_ips=self.pod_ips, netns=self.path)

    @classmethod
    def create(cls, tag: str) -> NodeNetwork:
        taken = _taken()
        subnet = next((s for s in _RANGE.subnets(new_prefix=28) if not any(s.overlaps(t) for t in taken)), None)
        if subnet is None:
            raise RuntimeError("no free /28 left in 198.51.100.0/24")
        name = f"vbsim-{tag}-{os.getpid()}"[:15]
        host_if, peer = f"vbh{os.getpid() % 100000}{tag}"[:15], "eth0"
        net = cls(name, host_if, subnet)
        try:
            _ip("netns", "add", name)
            _ip("link", "add", host_if, "type", "veth", "peer", "name", peer, "netns", name)
            _ip("addr", "add", f"{net.host_ip}/28", "dev", host_if)
            _ip("link", "set", host_if, "up")
            _ip("-n", name, "link", "set", "lo", "up")
            _ip("-n", name, "link", "set", peer, "up")
            _ip("-n", name, "addr", "add", f"{subnet[2]}/28", "dev", peer)
            for ip in net.pod_ips:
                _ip("-n", name, "addr", "add", f"{ip}/32", "dev", peer)
            _ip("-n", name, "route", "add", "default", "via", net.host_ip)
        except BaseException:
            net.delete()
            raise
        return net

    def delete(self) -> None:
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, check=False)
