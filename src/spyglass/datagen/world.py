"""The places, networks and software the synthetic dataset draws from.

Cities carry their real coordinates; organisations, ASNs (private-use range 64512-65534) and
domains are invented, so no real network is described.
"""

from __future__ import annotations

# city, region code, country code, country code3, country name, latitude, longitude, weight
CITIES = [
    ("New York", "NY", "US", "USA", "United States", 40.7128, -74.0060, 9),
    ("Ashburn", "VA", "US", "USA", "United States", 39.0438, -77.4874, 12),
    ("San Jose", "CA", "US", "USA", "United States", 37.3382, -121.8863, 7),
    ("Dallas", "TX", "US", "USA", "United States", 32.7767, -96.7970, 6),
    ("Chicago", "IL", "US", "USA", "United States", 41.8781, -87.6298, 5),
    ("Seattle", "WA", "US", "USA", "United States", 47.6062, -122.3321, 4),
    ("Toronto", "ON", "CA", "CAN", "Canada", 43.6532, -79.3832, 4),
    ("Montreal", "QC", "CA", "CAN", "Canada", 45.5017, -73.5673, 2),
    ("Mexico City", "CMX", "MX", "MEX", "Mexico", 19.4326, -99.1332, 3),
    ("Sao Paulo", "SP", "BR", "BRA", "Brazil", -23.5505, -46.6333, 5),
    ("Buenos Aires", "C", "AR", "ARG", "Argentina", -34.6037, -58.3816, 2),
    ("Santiago", "RM", "CL", "CHL", "Chile", -33.4489, -70.6693, 1),
    ("Bogota", "DC", "CO", "COL", "Colombia", 4.7110, -74.0721, 1),
    ("Lima", "LMA", "PE", "PER", "Peru", -12.0464, -77.0428, 1),
    ("London", "ENG", "GB", "GBR", "United Kingdom", 51.5074, -0.1278, 7),
    ("Manchester", "ENG", "GB", "GBR", "United Kingdom", 53.4808, -2.2426, 2),
    ("Dublin", "L", "IE", "IRL", "Ireland", 53.3498, -6.2603, 3),
    ("Paris", "IDF", "FR", "FRA", "France", 48.8566, 2.3522, 5),
    ("Roubaix", "HDF", "FR", "FRA", "France", 50.6942, 3.1746, 3),
    ("Frankfurt am Main", "HE", "DE", "DEU", "Germany", 50.1109, 8.6821, 7),
    ("Berlin", "BE", "DE", "DEU", "Germany", 52.5200, 13.4050, 3),
    ("Nuremberg", "BY", "DE", "DEU", "Germany", 49.4521, 11.0767, 3),
    ("Amsterdam", "NH", "NL", "NLD", "Netherlands", 52.3676, 4.9041, 6),
    ("Brussels", "BRU", "BE", "BEL", "Belgium", 50.8503, 4.3517, 1),
    ("Zurich", "ZH", "CH", "CHE", "Switzerland", 47.3769, 8.5417, 2),
    ("Vienna", "9", "AT", "AUT", "Austria", 48.2082, 16.3738, 1),
    ("Milan", "25", "IT", "ITA", "Italy", 45.4642, 9.1900, 2),
    ("Madrid", "MD", "ES", "ESP", "Spain", 40.4168, -3.7038, 2),
    ("Lisbon", "11", "PT", "PRT", "Portugal", 38.7223, -9.1393, 1),
    ("Stockholm", "AB", "SE", "SWE", "Sweden", 59.3293, 18.0686, 2),
    ("Oslo", "03", "NO", "NOR", "Norway", 59.9139, 10.7522, 1),
    ("Helsinki", "18", "FI", "FIN", "Finland", 60.1699, 24.9384, 2),
    ("Copenhagen", "84", "DK", "DNK", "Denmark", 55.6761, 12.5683, 1),
    ("Warsaw", "14", "PL", "POL", "Poland", 52.2297, 21.0122, 2),
    ("Prague", "10", "CZ", "CZE", "Czechia", 50.0755, 14.4378, 1),
    ("Bucharest", "B", "RO", "ROU", "Romania", 44.4268, 26.1025, 1),
    ("Kyiv", "30", "UA", "UKR", "Ukraine", 50.4501, 30.5234, 1),
    ("Moscow", "MOW", "RU", "RUS", "Russia", 55.7558, 37.6173, 5),
    ("Saint Petersburg", "SPE", "RU", "RUS", "Russia", 59.9311, 30.3609, 2),
    ("Istanbul", "34", "TR", "TUR", "Turkey", 41.0082, 28.9784, 2),
    ("Tel Aviv", "TA", "IL", "ISR", "Israel", 32.0853, 34.7818, 1),
    ("Dubai", "DU", "AE", "ARE", "United Arab Emirates", 25.2048, 55.2708, 1),
    ("Cairo", "C", "EG", "EGY", "Egypt", 30.0444, 31.2357, 1),
    ("Lagos", "LA", "NG", "NGA", "Nigeria", 6.5244, 3.3792, 1),
    ("Nairobi", "30", "KE", "KEN", "Kenya", -1.2921, 36.8219, 1),
    ("Johannesburg", "GT", "ZA", "ZAF", "South Africa", -26.2041, 28.0473, 2),
    ("Mumbai", "MH", "IN", "IND", "India", 19.0760, 72.8777, 4),
    ("Bangalore", "KA", "IN", "IND", "India", 12.9716, 77.5946, 3),
    ("Singapore", "01", "SG", "SGP", "Singapore", 1.3521, 103.8198, 5),
    ("Jakarta", "JK", "ID", "IDN", "Indonesia", -6.2088, 106.8456, 2),
    ("Bangkok", "10", "TH", "THA", "Thailand", 13.7563, 100.5018, 2),
    ("Ho Chi Minh City", "SG", "VN", "VNM", "Vietnam", 10.8231, 106.6297, 2),
    ("Hong Kong", "HCW", "HK", "HKG", "Hong Kong", 22.3193, 114.1694, 3),
    ("Shanghai", "SH", "CN", "CHN", "China", 31.2304, 121.4737, 6),
    ("Beijing", "BJ", "CN", "CHN", "China", 39.9042, 116.4074, 5),
    ("Shenzhen", "GD", "CN", "CHN", "China", 22.5431, 114.0579, 3),
    ("Taipei", "TPE", "TW", "TWN", "Taiwan", 25.0330, 121.5654, 2),
    ("Seoul", "11", "KR", "KOR", "South Korea", 37.5665, 126.9780, 4),
    ("Tokyo", "13", "JP", "JPN", "Japan", 35.6762, 139.6503, 5),
    ("Osaka", "27", "JP", "JPN", "Japan", 34.6937, 135.5023, 2),
    ("Sydney", "NSW", "AU", "AUS", "Australia", -33.8688, 151.2093, 3),
    ("Melbourne", "VIC", "AU", "AUS", "Australia", -37.8136, 144.9631, 2),
    ("Auckland", "AUK", "NZ", "NZL", "New Zealand", -36.8485, 174.7633, 1),
]

# organisation, ISP, ASN number, kind, the organisation's own domain. A provider (hosting, cloud,
# isp, a research network) is its own ISP; a customer (enterprise, school) names the provider whose
# addresses and ASN it uses, but names its hosts under its own domain.
ORGS = [
    ("Northwind Hosting", "Northwind Hosting Ltd", 64512, "hosting", "northwind-hosting.example"),
    ("Bluefin Cloud", "Bluefin Cloud Services", 64513, "cloud", "bluefin-cloud.example"),
    ("Cobalt Datacenters", "Cobalt Datacenters GmbH", 64514, "hosting", "cobalt-dc.example"),
    ("Meridian Telecom", "Meridian Telecom", 64515, "isp", "meridian-telecom.example"),
    ("Lumen Fiber Co-op", "Lumen Fiber Co-op", 64516, "isp", "lumenfiber.example"),
    ("Atlas Broadband", "Atlas Broadband", 64517, "isp", "atlas-bb.example"),
    ("Stratus Compute", "Stratus Compute Inc.", 64518, "cloud", "stratus-compute.example"),
    ("Harbor Networks", "Harbor Networks", 64519, "hosting", "harbor.example"),
    ("Kestrel Mobile", "Kestrel Mobile", 64520, "isp", "kestrel.example"),
    ("Granite State University", "Granite Research Network", 64521, "university", "granite.edu.example"),
    ("Orchid Retail Group", "Meridian Telecom", 64515, "enterprise", "orchid-retail.example"),
    ("Polaris Energy", "Atlas Broadband", 64517, "enterprise", "polaris-energy.example"),
    ("Vega Logistics", "Northwind Hosting Ltd", 64512, "enterprise", "vega-logistics.example"),
    ("Quartz VPS", "Quartz VPS", 64522, "hosting", "quartzvps.example"),
    ("Ember Internet", "Ember Internet", 64523, "isp", "ember.example"),
    ("Tidewater Utilities", "Lumen Fiber Co-op", 64516, "enterprise", "tidewater.example"),
    ("Sable Security Research", "Sable Security Research", 64524, "scanner", "sable-research.example"),
    ("Aurora Streaming", "Bluefin Cloud Services", 64513, "enterprise", "aurora-tv.example"),
    ("Juniper Valley Schools", "Granite Research Network", 64521, "university", "juniper-valley.example"),
    ("Redwood Manufacturing", "Ember Internet", 64523, "enterprise", "redwood-mfg.example"),
]

# Host names by kind: a provider's customers get names the provider gives (with the address in
# them), an organisation's own hosts the names its staff give.
NAME_PREFIXES = {
    "hosting": ["vps", "srv", "static", "dedi"],
    "cloud": ["vm", "compute", "lb"],
    "isp": ["dyn", "host", "cust", "pool"],
    "enterprise": ["www", "mail", "vpn", "edge", "api", "portal"],
    "university": ["www", "mail", "vpn", "lab", "lib"],
    "scanner": ["scan", "probe"],
}

# Operating systems by family; None is a host whose OS the crawler could not tell.
WINDOWS = ["Windows Server 2019", "Windows Server 2022"]
UNIX = ["Linux", "Ubuntu", "Debian", "FreeBSD"]
# The OS classes nmap -O would name for each (vendor, family, generation, type), most likely first.
OS_CLASSES = {
    "Windows Server 2019": [
        ("Microsoft", "Windows", "2019", "general purpose"),
        ("Microsoft", "Windows", "10", "general purpose"),
    ],
    "Windows Server 2022": [("Microsoft", "Windows", "2022", "general purpose")],
    "Linux": [("Linux", "Linux", "5.X", "general purpose"), ("Linux", "Linux", "4.X", "general purpose")],
    "Ubuntu": [("Linux", "Linux", "5.X", "general purpose")],
    "Debian": [("Linux", "Linux", "5.X", "general purpose"), ("Linux", "Linux", "4.X", "general purpose")],
    "FreeBSD": [("FreeBSD", "FreeBSD", "13.X", "general purpose"), ("FreeBSD", "FreeBSD", "12.X", "general purpose")],
}

HTTP_TITLES = {
    "Apache httpd": ["Apache2 Ubuntu Default Page: It works", "Index of /", "It works!", "Welcome"],
    "nginx": ["Welcome to nginx!", "404 Not Found", "Dashboard", "Login"],
    "Microsoft IIS httpd": ["IIS Windows Server", "Outlook", "Remote Desktop Web Access"],
    "lighttpd": ["Router Login", "Web Configurator", "NAS Login"],
    "Jetty": ["Jenkins", "Dashboard [Jenkins]", "Error 404 Not Found"],
    "Kibana": ["Elastic", "Kibana"],
    "Grafana": ["Grafana"],
}

COMPONENTS = [
    ("jQuery", ["JavaScript libraries"]),
    ("Bootstrap", ["UI frameworks"]),
    ("PHP", ["Programming languages"]),
    ("WordPress", ["CMS", "Blogs"]),
    ("React", ["JavaScript frameworks"]),
    ("Google Analytics", ["Analytics"]),
    ("Font Awesome", ["Font scripts"]),
    ("Cloudflare", ["CDN"]),
    ("Drupal", ["CMS"]),
    ("Vue.js", ["JavaScript frameworks"]),
]
