"""Network tools measured from this machine: ping (icmplib) and DNS (the system resolver, dnspython).

Used by the geonet backend, and by the dashboard for the "this machine" location.
"""
