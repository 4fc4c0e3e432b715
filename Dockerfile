FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN apt-get update && apt-get install -y --no-install-recommends git nodejs npm && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt package.json package-lock.json ./
RUN pip install --no-cache-dir -r requirements.txt && npm ci --no-audit --no-fund
COPY . .
RUN mkdir -p static/vendor/pico static/vendor/chartjs \
 && cp node_modules/@picocss/pico/css/pico.min.css static/vendor/pico/ \
 && cp node_modules/chart.js/dist/chart.umd.min.js static/vendor/chartjs/ \
 && DEBUG=0 SECRET_KEY=build-only-not-secret-build-only-not-secret python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "portal.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4"]
