from types import SimpleNamespace

from zun.common import service_catalog


def group(**values: object) -> SimpleNamespace:
    return SimpleNamespace(
        **{"ca_file": None, "cert_file": None, "key_file": None, "insecure": False, **values}
    )


def test_interface_names() -> None:
    assert service_catalog.interface("publicURL") == "public"
    assert service_catalog.interface("internalURL") == "internal"
    assert service_catalog.interface("adminURL") == "admin"
    assert service_catalog.interface("internal") == "internal"


def test_no_tls_option_leaves_the_session_alone() -> None:
    assert service_catalog.tls_options(group()) == {}


def test_ca_file_client_certificate_and_insecure() -> None:
    assert service_catalog.tls_options(group(ca_file="/ca.pem")) == {"verify": "/ca.pem"}
    assert service_catalog.tls_options(group(ca_file="/ca.pem", insecure=True)) == {"verify": False}
    assert service_catalog.tls_options(group(cert_file="/c.pem", key_file="/k.pem")) == {
        "cert": ("/c.pem", "/k.pem")
    }
    assert service_catalog.tls_options(group(cert_file="/both.pem")) == {"cert": "/both.pem"}
